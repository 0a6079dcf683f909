"""``NativeMCP``: an ASGI application that serves the MCP endpoints itself and hands every
other request to Django's.

Opt-in, in ``asgi.py``::

    from django.core.asgi import get_asgi_application
    from django_mcp.http.native import NativeMCP

    application = NativeMCP(get_asgi_application())

Why: under ASGI, Django's handler runs ``MCPView`` (a sync view) through a thread made for
each request, behind the project's whole middleware stack and URL resolution. For the MCP
path none of it decides anything: :class:`~django_mcp.http.middleware.MCPMiddleware` and
the view do. So this application runs exactly those steps, the same functions, without
the handler: the path is looked up in a table (:func:`~django_mcp.http.asgi.mcp_match_for`),
the body is read up to ``MAX_REQUEST_BYTES`` plus one byte, a Django ``ASGIRequest`` is
built from the scope and that body, admission runs on the event loop
(:func:`~django_mcp.http.middleware.before_admission` and
:func:`~django_mcp.http.middleware.admit`; in a worker thread when it may query the
database), the view runs in a pooled worker thread (user code may use the ORM) or, for an
``async def`` tool admitted on the loop, the call is awaited right here (:func:`on_loop`),
the exchange is recorded (:func:`~django_mcp.http.middleware.record`) and the response is sent.
Streams (SSE progress, ``subscriptions/listen``) are the view's own, sent here, and
cancelled when the client disconnects, as Django's handler does. A client that disconnects
before its body ends is recorded as WSGI records a reset connection (400, -32700), and
nothing is sent.

Only ``POST`` takes this path. Anything else on an MCP URL (405, a browser's page) and
every other URL go to Django unchanged; an MCP URL's body is still bounded there, as
:class:`~django_mcp.http.asgi.BodyLimit` bounds it. What Django's other middleware would
do for the MCP path does not happen (sessions, ``request.user`` from a session cookie,
CSRF, the project's own middleware): see docs/deployment.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import weakref
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import SyncToAsync, ThreadSensitiveContext, sync_to_async
from django.core.exceptions import BadRequest, SuspiciousOperation
from django.core.handlers.asgi import ASGIRequest, get_script_prefix
from django.db import close_old_connections
from django.urls import set_script_prefix

from django_mcp.conf import mcp_settings
from django_mcp.http.asgi import (
    ASGIApp,
    Receive,
    Scope,
    Send,
    declared_length,
    mcp_match_for,
    run,
)
from django_mcp.http.body import CLIENT_GONE_REASON
from django_mcp.http.exchange import begin
from django_mcp.http.framing import (
    atomic_requests,
    enter_view,
    log_refusal,
    record_best_effort,
    run_view,
)
from django_mcp.http.streaming import wants_stream

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse, HttpResponseBase
    from django.urls import ResolverMatch

    from django_mcp.http.exchange import Exchange
    from django_mcp.protocol.admission import Admitted

#: Response bodies are sent in pieces of at most this many bytes (as Django's handler).
CHUNK_BYTES: Final = 2**16


class Disconnected(Exception):
    """The client went away before its request body was read."""


class ClientGone(io.BytesIO):
    """The body of a request whose client went away before sending all of it. Reading it
    fails as a reset connection does under WSGI, so the middleware refuses it the same
    way (a 400 parse error) and the exchange is recorded, though nobody hears the answer."""

    def read(self, size: int | None = -1) -> bytes:
        raise ConnectionResetError(CLIENT_GONE_REASON)

    def readline(self, size: int | None = -1) -> bytes:
        raise ConnectionResetError(CLIENT_GONE_REASON)


async def read_body(receive: Receive, limit: int, declared: int | None) -> bytes:
    """The request body, but never more than ``limit + 1`` bytes of it (nothing when the
    declared ``Content-Length`` is already over ``limit``): enough for the middleware's
    size check to refuse it with 413. The rest is never read."""
    if declared is not None and declared > limit:
        return b""
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Disconnected()
        chunk: bytes = message.get("body", b"")
        parts.append(chunk)
        size += len(chunk)
        if size > limit or not message.get("more_body", False):
            return b"".join(parts)[: limit + 1]


def _with_clean_connections(func: Callable[..., Any], *args: Any) -> Any:
    close_old_connections()
    try:
        return func(*args)
    finally:
        close_old_connections()


#: The worker pool's adapter, per event loop and ``NATIVE_WORKER_THREADS`` value (made once:
#: building a ``sync_to_async`` per request costs as much as a tenth of the hop). Per loop,
#: as the loop's own default executor: a pool and its threads' database connections never
#: outlive the loop they served; a collected pool's threads exit.
_workers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, SyncToAsync[..., Any]]]
_workers = weakref.WeakKeyDictionary()


async def in_worker(func: Callable[..., Any], *args: Any) -> Any:
    """``func(*args)`` in a pooled worker thread.

    Database connections are per thread: closed when unusable or past ``CONN_MAX_AGE``
    before and after, in that thread, as ``request_started`` and ``request_finished`` do
    for a request Django serves. ``thread_sensitive=False``: no thread is made for the
    request (Django makes one per request for its sync views), and an ``async def`` tool
    still runs on this event loop (``async_to_sync`` finds it).

    The pool is django-mcp's own, ``NATIVE_WORKER_THREADS`` threads, not the loop's default
    executor: that one has ``min(32, CPUs + 4)`` threads (6 on two cores) shared with the
    server, so that many slow sync tools would stall every other MCP request.
    """
    size = int(mcp_settings.NATIVE_WORKER_THREADS)
    adapters = _workers.setdefault(asyncio.get_running_loop(), {})
    adapter = adapters.get(size)
    if adapter is None:
        pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix="django-mcp-native")
        adapter = adapters.setdefault(
            size, SyncToAsync(_with_clean_connections, thread_sensitive=False, executor=pool)
        )
    return await adapter(func, *args)


def plain_post(view: Callable[..., Any], request: HttpRequest) -> bool:
    """Whether ``view`` would answer ``request`` with nothing but ``MCPView``'s own steps
    (``MCPView.as_view`` says so, for that very function: not a decorator's wrapper) and
    nothing from the route (no captured values or extra keywords to pass): only then may
    :func:`on_loop` serve it without calling the view. Any other view runs, as on
    Django's path."""
    route = request.resolver_match
    return getattr(view, "mcp_plain_post", None) is view and (
        route is None or not (route.args or route.kwargs)
    )


async def on_loop(
    view: Callable[..., HttpResponseBase],
    exchange: Exchange,
    admitted: Admitted,
    request: HttpRequest,
) -> HttpResponse:
    """An ``async def`` tool's call, dispatched right here with no thread (what
    :meth:`~django_mcp.server.dispatch.MCPServer.runs_on_loop` allows; a streamed reply
    still goes through the view). Only for a view that is ``MCPView``'s own code
    (:func:`plain_post`): the instance is made and set up as the view would, and the reply
    rendered by ``MCPView.render``.

    Sync code the tool awaits through ``sync_to_async`` (the async ORM) runs in one thread
    made for this request, as Django's handler gives each request; if one was made, its
    database connections are closed in it at the end, as ``request_finished`` would.
    """
    request_thread = ThreadSensitiveContext()
    async with request_thread:
        try:
            reply = await exchange.server.ahandle(admitted, request=request)
        finally:
            # asgiref keeps the thread of a context here; none was made if absent.
            if request_thread in SyncToAsync.context_to_thread_executor:
                await sync_to_async(close_old_connections)()
    exchange.reply = reply
    instance = view.view_class(**view.view_initkwargs)  # type: ignore[attr-defined]
    instance.setup(request)
    rendered: HttpResponse = instance.render(reply)
    return rendered


def readable_request(scope: Scope, body: io.BytesIO) -> tuple[ASGIRequest, Exception | None]:
    """The request of ``scope``, and the refusal it earns when Django cannot read it.

    A query string that is not UTF-8 makes ``ASGIRequest`` raise ``UnicodeDecodeError``,
    which Django's own handler answers with a 400; a ``Content-Type`` with an RFC 2231
    charset naming no codec (``charset*=bogus''x``) or one ``codecs.lookup`` refuses
    (``charset*=''%00`` decodes to NUL) makes it raise ``ValueError``, which Django's
    handler lets escape. Here the request is built again
    without either (an MCP POST reads neither), so that the 400 is answered in the
    protocol's shape and recorded like any refusal, rather than escaping unanswered.
    """
    try:
        return ASGIRequest(scope, body), None
    except (ValueError, BadRequest) as exc:  # UnicodeDecodeError included; Django 6.1+:
        # BadRequest("Invalid Content-Type header.") where 5.2 raised ValueError
        headers = [h for h in scope.get("headers", ()) if h[0].lower() != b"content-type"]
        request = ASGIRequest({**scope, "query_string": b"", "headers": headers}, body)
        unread = "query string" if isinstance(exc, UnicodeDecodeError) else "Content-Type"
        return request, SuspiciousOperation(f"The request's {unread} cannot be read")


class NativeMCP:
    """Serve ``POST`` on the MCP endpoints without Django's handler; everything else goes
    to ``application`` (Django's ASGI application)."""

    def __init__(self, application: ASGIApp) -> None:
        # Imported here, not at the top: ``asgi.py`` imports this module before
        # ``get_asgi_application()`` has set Django up, and the middleware's recorder needs
        # the models. By the time this runs, the argument has set it up.
        from django_mcp.http import middleware

        self.application = application
        self.before_admission = middleware.before_admission
        self.admission_needs_thread = middleware.admission_needs_thread
        self.admit = middleware.admit
        self.record = middleware.record
        self.answer_view_failure = middleware.answer_view_failure
        self.record_interrupted = partial(
            middleware.record_interrupted, when_cancelled=middleware.WORKER_STOPPED
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = mcp_match_for(scope) if scope.get("type") == "http" else None
        if match is None:
            await self.application(scope, receive, send)
        elif scope.get("method") != "POST":
            await run(self.application, scope, receive, send, int(mcp_settings.MAX_REQUEST_BYTES))
        else:
            await self.serve(match, scope, receive, send)

    async def serve(self, match: ResolverMatch, scope: Scope, receive: Receive, send: Send) -> None:
        """One MCP POST, from its body to the end of its response."""
        limit = int(mcp_settings.MAX_REQUEST_BYTES)
        gone = False
        try:
            body: io.BytesIO = io.BytesIO(await read_body(receive, limit, declared_length(scope)))
        except Disconnected:  # still recorded: a request the log never saw is lost
            body, gone = ClientGone(), True
        set_script_prefix(get_script_prefix(scope))
        request, unreadable = readable_request(scope, body)
        enter_view(request, match)
        try:
            if unreadable is not None:
                server = match.func.mcp_server  # type: ignore[attr-defined]
                begin(request, server.site, server)  # so that the refusal is recorded
                raise unreadable
            response = await self.respond(match.func, request)
        except Exception as exc:  # a bug here must still answer, in the protocol's shape
            # Reported in a thread, as Django reports one: receivers and log handlers
            # (mail to ADMINS) may block or query the database.
            response = await sync_to_async(self.answer_view_failure, thread_sensitive=False)(
                request, exc
            )
        except BaseException as exc:  # still recorded
            self.record_interrupted(request, exc)  # only a server shutting down cancels here
            raise
        else:
            log_refusal(request, response)
        record_best_effort(self.record, request, response, on_event_loop=True)
        if gone:
            return  # nobody is there to read the answer
        if response.streaming:
            await send_stream(response, send, receive)
        else:
            await send_response(response, send)

    async def respond(
        self, view: Callable[..., HttpResponseBase], request: HttpRequest
    ) -> HttpResponseBase:
        """The middleware's admission, then the view: what Django would have answered."""
        server = view.mcp_server  # type: ignore[attr-defined]
        exchange, checked, early = self.before_admission(request, server)
        if exchange is None or checked is None:
            assert early is not None  # a POST always gets an exchange or an answer
            return early
        if self.admission_needs_thread(request, exchange):
            answer: HttpResponseBase = await in_worker(
                self.admit_and_respond, view, exchange, request, checked
            )
            return answer
        refused = self.admit(exchange, request, checked)
        if refused is not None:
            return refused
        admitted = exchange.admitted
        if (
            admitted is not None
            and plain_post(view, request)
            and exchange.server.runs_on_loop(admitted)
            and not wants_stream(admitted, request)
            and not atomic_requests()  # the view's transaction is a worker thread's
        ):
            return await on_loop(view, exchange, admitted, request)
        served: HttpResponseBase = await in_worker(run_view, view, request)
        return served

    def admit_and_respond(
        self,
        view: Callable[..., HttpResponseBase],
        exchange: Exchange,
        request: HttpRequest,
        body: bytes,
    ) -> HttpResponseBase:
        """Admission that may block, then the view: one thread hop for both."""
        refused = self.admit(exchange, request, body)
        return refused or run_view(view, request)


def response_start(response: HttpResponseBase) -> dict[str, Any]:
    """The ``http.response.start`` message of ``response``: status, headers, cookies."""
    headers = [
        (str(name).encode("ascii"), str(value).encode("latin1")) for name, value in response.items()
    ]
    for cookie in response.cookies.values():
        headers.append((b"Set-Cookie", cookie.output(header="").encode("ascii").strip()))
    return {"type": "http.response.start", "status": response.status_code, "headers": headers}


async def send_response(response: HttpResponseBase, send: Send) -> None:
    """A complete response: the start, then the body in pieces. With its
    ``Content-Length`` (what ``CommonMiddleware`` adds on Django's path), so the server
    need not chunk it and an HTTP/1.0 client keeps its connection."""
    content: bytes = response.content  # type: ignore[attr-defined]
    if not response.has_header("Content-Length"):
        response["Content-Length"] = str(len(content))
    await send(response_start(response))
    if len(content) <= CHUNK_BYTES:
        await send({"type": "http.response.body", "body": content})
        return
    for offset in range(0, len(content), CHUNK_BYTES):
        more = offset + CHUNK_BYTES < len(content)
        piece = content[offset : offset + CHUNK_BYTES]
        await send({"type": "http.response.body", "body": piece, "more_body": more})


async def send_stream(response: HttpResponseBase, send: Send, receive: Receive) -> None:
    """A streamed response (SSE), until it ends or the client disconnects; then the
    response is closed (a listen stream gives its slot back)."""
    streaming = asyncio.ensure_future(_stream_body(response, send))
    disconnect = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait((streaming, disconnect), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (disconnect, streaming):
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await task
        await sync_to_async(response.close, thread_sensitive=False)()


async def _stream_body(response: HttpResponseBase, send: Send) -> None:
    await send(response_start(response))
    content: AsyncIterator[bytes] = aiter(response)  # type: ignore[arg-type]
    async with contextlib.aclosing(content) as parts:  # type: ignore[type-var]
        async for part in parts:
            await send({"type": "http.response.body", "body": bytes(part), "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _disconnected(receive: Receive) -> None:
    """Return when the client disconnects (the body was read to its end already)."""
    while (await receive())["type"] != "http.disconnect":
        pass
