"""How many ``subscriptions/listen`` streams a process holds, and for how long.

A listen stream is a request that does not end: left unbounded, a few clients hold every
worker of a WSGI server, thousands of anonymous streams exhaust a process, and one user's
streams each pin a database connection. So every stream

- takes a slot before it opens: at most ``LISTEN_MAX_STREAMS`` per process and
  ``LISTEN_MAX_STREAMS_PER_CALLER`` per caller (see :func:`caller_key`); under WSGI at most
  ``LISTEN_WSGI_STREAMS`` per process, and none in a worker that serves one request at a
  time (the stream would hold the whole worker). Over a limit the request is refused
  before any stream opens, with an error that says which limit;
- ends by itself after ``LISTEN_MAX_SECONDS`` (:func:`max_seconds`), with its closing
  result;
- holds no database connection while it waits (:func:`release_connections`).

The counts are per process: several processes each hold up to these numbers.
"""

from __future__ import annotations

import os
import threading
from collections import Counter, deque
from typing import TYPE_CHECKING, Any, Final

from django.core.checks import CheckMessage, Warning
from django.db import connections

from django_mcp.auth.resolve import caller_of
from django_mcp.conf import mcp_settings
from django_mcp.protocol.errors import ListenUnavailable, TooManyCallerStreams

if TYPE_CHECKING:
    from django.http import HttpRequest

#: Seconds a refused client is asked to wait (``Retry-After``) before it tries again.
RETRY_AFTER_SECONDS: Final = 30

_lock = threading.Lock()
_open = 0
_open_wsgi = 0
_by_caller: Counter[str] = Counter()
#: Slots given back and not yet taken off the counts (see :class:`Slot`).
_returned: deque[Slot] = deque()
#: Moves on in a forked child, whose counts start again from nothing.
_generation = 0


def _forget_counts() -> None:
    """In a forked child: the parent's streams are not the child's, and its lock may have
    been held by a thread that does not exist here (the child would wait for ever)."""
    global _lock, _open, _open_wsgi, _by_caller, _returned, _generation
    _lock, _open, _open_wsgi = threading.Lock(), 0, 0
    _by_caller, _returned = Counter(), deque()
    _generation += 1


os.register_at_fork(after_in_child=_forget_counts)


def caller_key(request: HttpRequest, address: str | None = None) -> str:
    """Whom a stream is counted against: the request's resolved caller
    (:attr:`~django_mcp.auth.caller.Caller.principal`, ``user:<pk>``, whichever
    authenticator found it: token, OAuth, session), else the client's address.

    Only the caller the authenticators resolved counts, never ``request.user`` read on its
    own: with no caller attached (no authentication ran, or the database was down while it
    did) the stream is counted by address, without touching the database.
    The address is the one the transport counts the rate limits by (HTTP: the client
    address behind ``TRUSTED_PROXY_HOPS`` proxies, an IPv6 one as its ``IPV6_PREFIX``
    network), else ``REMOTE_ADDR`` as the server saw it.
    """
    caller = caller_of(request)
    if caller is not None and caller.has_credentials:
        return caller.principal
    return "ip:" + str(address or request.META.get("REMOTE_ADDR") or "unknown")


class Slot:
    """One open stream's place in the counts; :meth:`release` gives it back, once.

    :meth:`release` never takes the counts' lock: it only queues the slot, and whoever
    reads the counts next settles the queue under the lock (:func:`_settle`). A stream's
    response that nobody closed is freed by a finalizer, often run by the cyclic garbage
    collector wherever an allocation triggers it: on any thread, even one inside the lock
    (a response and its request reference each other). Waiting for the lock there would
    wait for ever, and every later stream of the process with it.
    """

    def __init__(self, key: str, *, wsgi: bool) -> None:
        self.key = key
        self.wsgi = wsgi
        self.generation = _generation  # a parent's slot, released in a child, counts for nothing
        self._settled = False  # read and written under the lock only

    def release(self) -> None:
        _returned.append(self)  # atomic, lock-free: safe in a finalizer


def _settle() -> None:
    """Take the returned slots off the counts; each slot once, however often it was
    released (the stream's end, the response's close and its finalizer may all do it).
    Called with the lock held."""
    global _open, _open_wsgi
    while True:
        try:
            slot = _returned.popleft()
        except IndexError:
            return
        if slot._settled or slot.generation != _generation:
            continue
        slot._settled = True
        _open -= 1
        _open_wsgi -= int(slot.wsgi)
        _by_caller[slot.key] -= 1
        if _by_caller[slot.key] <= 0:
            del _by_caller[slot.key]


def is_asgi(request: HttpRequest) -> bool:
    """Whether ``request`` came through an ASGI server (Django's handler or the native
    path, which both build an ``ASGIRequest``), where a stream costs no thread."""
    from django.core.handlers.asgi import ASGIRequest

    return isinstance(request, ASGIRequest)


def is_wsgi(request: HttpRequest) -> bool:
    """Whether ``request`` came through a WSGI server (Django's handler or the native WSGI
    path), where a stream holds a worker thread. Neither this nor :func:`is_asgi` holds
    for stdio's requests, built by the transport itself."""
    from django.core.handlers.wsgi import WSGIRequest

    return isinstance(request, WSGIRequest)


def wsgi_streams() -> int:
    """``LISTEN_WSGI_STREAMS``; a value the checks refuse counts as 0 (listen refused)
    rather than breaking every request that asks (discover does)."""
    value: Any = mcp_settings.LISTEN_WSGI_STREAMS
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(0, value)


def never_held(request: HttpRequest | None) -> ListenUnavailable | None:
    """The refusal of *every* listen stream by the server ``request`` came through, or
    None where one may be held: over ASGI, over stdio, and in a threaded WSGI worker once
    ``LISTEN_WSGI_STREAMS`` is above 0.

    ``server/discover`` asks too: where this refuses, it offers no ``listChanged`` and no
    ``subscribe``, since no stream could carry those notifications
    (basic/patterns/subscriptions.mdx ties them to listen). The refusal itself is the
    same 503 as a full server's: a deployment may change its settings.
    """
    if request is None or not is_wsgi(request):
        return None
    if request.META.get("wsgi.multithread") is False:
        return ListenUnavailable(
            "wsgi-single-threaded",
            "This WSGI worker serves one request at a time; a listen stream would hold it. "
            "Serve subscriptions/listen from ASGI or from threaded workers.",
        )
    if wsgi_streams() == 0:
        return ListenUnavailable(
            "wsgi",
            "This WSGI server holds no listen streams (LISTEN_WSGI_STREAMS is 0); serve "
            "subscriptions/listen from ASGI.",
        )
    return None


def acquire(request: HttpRequest, address: str | None = None) -> Slot:
    """A slot for one more stream of this request's caller, or the refusal (an
    :class:`~django_mcp.protocol.errors.MCPError` to answer with). ``address``: the
    client's address as the transport counts it (see :func:`caller_key`)."""
    global _open, _open_wsgi
    refusal = never_held(request)
    if refusal is not None:
        raise refusal
    key = caller_key(request, address)
    wsgi = is_wsgi(request)
    with _lock:
        _settle()
        if wsgi and _open_wsgi >= wsgi_streams():
            raise ListenUnavailable(
                "wsgi",
                "This WSGI server holds no more listen streams (LISTEN_WSGI_STREAMS); "
                "serve subscriptions/listen from ASGI.",
            )
        if _open >= max_streams():
            raise ListenUnavailable("process")
        if _by_caller[key] >= max_streams_per_caller():
            raise TooManyCallerStreams("caller")
        _open += 1
        _open_wsgi += int(wsgi)
        _by_caller[key] += 1
    return Slot(key, wsgi=wsgi)


def max_streams() -> int:
    """``LISTEN_MAX_STREAMS``; a value the checks refuse (a server that never ran them:
    ASGI and WSGI servers do not) means the default, never a failure or every stream
    refused."""
    return int(mcp_settings.number("LISTEN_MAX_STREAMS", at_least=1, integer=True))


def max_streams_per_caller() -> int:
    """``LISTEN_MAX_STREAMS_PER_CALLER``; a value the checks refuse means the default."""
    return int(mcp_settings.number("LISTEN_MAX_STREAMS_PER_CALLER", at_least=1, integer=True))


def keep_alive_seconds() -> float:
    """``LISTEN_KEEPALIVE_SECONDS``; a value the checks refuse means the default: 0 or
    less would write keep-alives in a busy loop, None would break every stream."""
    return float(mcp_settings.number("LISTEN_KEEPALIVE_SECONDS", above=0))


def open_streams() -> int:
    """Streams this process holds now (for tests and monitoring)."""
    with _lock:
        _settle()
        return _open


def max_seconds() -> float:
    """``LISTEN_MAX_SECONDS``; a value the checks refuse (such as None) means the default:
    a stream is never unbounded."""
    return float(mcp_settings.number("LISTEN_MAX_SECONDS", above=0))


def release_connections() -> None:
    """Close this thread's database connections, so a stream waiting for events holds
    none; a later query opens a new one. A connection inside a transaction is left alone:
    closing it would break the transaction (a test's, or ``ATOMIC_REQUESTS``' view)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


def check_wsgi_streams() -> list[CheckMessage]:
    """django_mcp.W013: listen is enabled under WSGI, where each stream holds a thread."""
    streams = mcp_settings.LISTEN_WSGI_STREAMS
    if not isinstance(streams, int) or streams <= 0:
        return []
    return [
        Warning(
            f"subscriptions/listen is enabled under WSGI (LISTEN_WSGI_STREAMS={streams}): "
            f"each open stream holds a worker thread for up to {max_seconds():g} s.",
            hint="Run threaded workers (gunicorn --worker-class gthread --threads N) with N "
            "well above LISTEN_WSGI_STREAMS, or serve listen from ASGI and set it to 0. "
            "Silence this check once the threads are sized.",
            id="django_mcp.W013",
        )
    ]
