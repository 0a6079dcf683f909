"""Reading a request body up to a limit, whatever framing the client used.

With a ``Content-Length``, Django's request stream ends at that length. A chunked request
(``Transfer-Encoding: chunked``, no ``Content-Length``) is legal HTTP/1.1 that MCP clients
may send; under WSGI, Django then sees a body of length 0, because PEP 3333 says reading
``wsgi.input`` past ``CONTENT_LENGTH`` may block. Servers that decode chunked bodies and
end the stream at the body's end say so with ``wsgi.input_terminated`` (gunicorn, mod_wsgi;
the WSGI "input terminated" extension); for them the body is read from ``wsgi.input``
directly, never more than ``limit`` bytes. Under ASGI the body arrives in messages and
Django's request stream already holds all of it (bounded by
:class:`django_mcp.http.asgi.BodyLimit`).

A body the server cannot decode (gunicorn raises its own ``ParseException`` subclasses, not
``OSError``, for a malformed chunk size or a missing chunk terminator) is no message at
all: whatever the server's stream raises is turned into ``UnreadablePostError``, the
``OSError`` a reset connection gives, so it is refused with -32700 like a body cut short,
never answered with a server error.

A client that disconnects mid-body makes Django's ASGI handler give up before any
middleware runs, so nothing would record the exchange. ``BodyLimit`` ends such a body
where it stopped and sets :data:`CLIENT_GONE`; the middleware then refuses it as a reset
connection is refused under WSGI, and records it the same way.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

from django.http import UnreadablePostError

from django_mcp.protocol.errors import RequestTooLarge

if TYPE_CHECKING:
    from django.http import HttpRequest

logger = logging.getLogger("django_mcp")

#: Set by ``BodyLimit`` when the client disconnected before its body ended: in the
#: request's own context, which every task and thread Django runs it in copies (a scope
#: key would be lost by an ASGI middleware that copies the scope).
CLIENT_GONE: Final[ContextVar[bool]] = ContextVar("django_mcp_client_gone", default=False)
#: Why such a body cannot be read (the exception's text, for logs; the client is told
#: ``middleware.UNREADABLE_BODY``).
CLIENT_GONE_REASON: Final = "The client disconnected before its body ended"


def read_at_most(request: HttpRequest, size: int) -> bytes:
    """Up to ``size`` bytes of the body of ``request`` (less only at the body's end).
    Raises ``UnreadablePostError`` when the server could not give the body (see above)."""
    try:
        return _read(request, size)
    except (OSError, MemoryError, RecursionError):  # a reset connection, or the process's own
        raise
    except Exception as exc:  # the server's own framing error: the body is unreadable
        # Logged with its traceback: the same exception could come from a project's own
        # ``wsgi.input`` wrapper, a bug the client's -32700 would otherwise hide.
        logger.warning(
            "django-mcp could not read a request body on %s", request.path, exc_info=True
        )
        raise UnreadablePostError(f"The server could not decode the body: {exc!r}") from exc


def _read(request: HttpRequest, size: int) -> bytes:
    meta = request.META
    stream: Any = meta.get("wsgi.input")
    if meta.get("CONTENT_LENGTH") or stream is None or not meta.get("wsgi.input_terminated"):
        return request.read(size)
    parts: list[bytes] = []
    remaining = size
    while remaining > 0:  # read() may return less than asked before the end
        chunk = stream.read(remaining)
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


def read_body(request: HttpRequest, limit: int) -> bytes:
    """The request body, read once, refusing anything over ``limit`` bytes. Raises
    ``UnreadablePostError`` (an ``OSError``) when the client went away mid-body, also
    when an earlier middleware already read what had arrived, and when the body ended
    short of its declared ``Content-Length`` (a WSGI server whose read comes up short
    rather than failing): what arrived may happen to be a whole message, but it is not
    the one the client sent."""
    if CLIENT_GONE.get():
        raise UnreadablePostError(CLIENT_GONE_REASON)
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if hasattr(request, "_body"):
        body: bytes = request.body
    else:
        if declared > limit:
            raise RequestTooLarge()
        body = read_at_most(request, limit + 1)
    if len(body) > limit:
        raise RequestTooLarge()
    if len(body) < declared:
        raise UnreadablePostError("The body ended before its declared length")
    # What request.body gives from now on: code after the middleware that reads it (an
    # authentication class such as django-oauth-toolkit's DRF one) would otherwise meet
    # the consumed stream and raise RawPostDataException, an HTML 500.
    request._body = body
    return body
