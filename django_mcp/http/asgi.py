"""``BodyLimit``: an ASGI wrapper that keeps an MCP request body from being read whole.

Django's ASGI handler reads the entire body (into a ``SpooledTemporaryFile``) before any
middleware runs, so ``MAX_REQUEST_BYTES`` alone is checked only after a huge chunked body
has been received. Wrap the application in ``asgi.py``::

    from django.core.asgi import get_asgi_application
    from django_mcp.http.asgi import BodyLimit

    application = BodyLimit(get_asgi_application())

For requests to an MCP endpoint (a path that resolves to an ``MCPView``) the wrapper hands
Django at most ``MAX_REQUEST_BYTES`` plus one message of body: with a declared
``Content-Length`` over the limit it reads nothing, otherwise it stops asking the server
for body messages once the limit is passed and tells Django the body ended. Django then
holds more than the limit, so ``MCPMiddleware`` answers 413 with its usual JSON-RPC error
and records the exchange, as for any other refused request. The rest of the body is never
read: the server discards it or closes the connection. A client that disconnects is
recorded too, where Django alone would drop the request without a trace: before its body
ended, as a 400 with -32700 (:data:`~django_mcp.http.body.CLIENT_GONE`); after it, with
the answer the request got, though nobody reads it (see :class:`Guard`). Other paths pass
through untouched.

This bounds what the application reads. It cannot bound what an ASGI server buffers before
calling the application: uvicorn and hypercorn read a body only as the application asks
(flow control), but Daphne (through Twisted) receives the whole body into a temporary file
and queues all of it before the application runs. For Daphne, :mod:`django_mcp.http.daphne`
bounds what the server keeps, deciding which requests go to an MCP endpoint with
:func:`is_mcp_path` as this wrapper does (see docs/security.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from django.core.handlers.asgi import get_script_prefix

from django_mcp.conf import mcp_settings
from django_mcp.http.body import CLIENT_GONE
from django_mcp.http.routes import mcp_match_at, routes_to_mcp

if TYPE_CHECKING:
    from django.urls import ResolverMatch

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _routed_path(scope: Scope) -> str:
    """The path of ``scope`` as Django will route it: without the script prefix
    (``FORCE_SCRIPT_NAME`` when set, else the scope's ``root_path``)."""
    path: str = scope.get("path", "")
    return path.removeprefix(get_script_prefix(scope))


def mcp_match_for(scope: Scope) -> ResolverMatch | None:
    """How the request of ``scope`` resolves when it is routed to an MCP view (as Django
    will route it), or None; see :func:`~django_mcp.http.routes.mcp_match_at`."""
    return mcp_match_at(_routed_path(scope))


def is_mcp_path(scope: Scope) -> bool:
    """Whether the request of ``scope`` is routed to an MCP view (as Django will route it)."""
    return routes_to_mcp(_routed_path(scope))


def declared_length(scope: Scope) -> int | None:
    """The ``Content-Length`` of the request, or None when absent or not a number."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class Guard:
    """The ``receive`` and ``send`` of one MCP request handed to Django's ASGI application:

    - the body ends once more than ``limit`` bytes have arrived (nothing is read when the
      declared length is already over it), so the middleware answers 413;
    - a disconnect before the body's end ends the body there and sets
      :data:`~django_mcp.http.body.CLIENT_GONE`, so the middleware refuses the request
      (400, -32700) and records it, where Django would drop it without a trace;
    - a disconnect after the body is held back until the response has started. Django
      would cancel the request at once, and the middleware would never record it, while
      the sync view runs on to its end in its thread (a plain-JSON request has no stream
      to close, docs/guides/streaming.md). A stream's response starts when the stream
      opens (a progress stream: at its first notification), and from then on its
      disconnect cancels it as soon as it comes.

    :func:`run` applies it, and scopes ``CLIENT_GONE`` to the one request.
    """

    def __init__(self, receive: Receive, send: Send, limit: int, declared: int | None) -> None:
        self._receive, self._send = receive, send
        self._limit, self._declared = limit, declared
        self._received = 0
        self._state = "body"  # "body", then "passed" (the real end) or "cut" (ended here)
        self._started = asyncio.Event()
        self._abandoned = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self._started.set()
        await self._send(message)

    async def receive(self) -> Message:
        if self._state == "cut":
            # The body was cut short: reading on would pull the rest of it. Django only
            # listens for a disconnect here, and stops listening when the response is sent.
            await asyncio.Event().wait()
        if self._state == "passed":
            message = await self._receive()
            if message["type"] == "http.disconnect":
                await self._started.wait()
                if self._abandoned:  # the server stopped the request: end without a word
                    raise asyncio.CancelledError
            return message
        if self._declared is not None and self._declared > self._limit:
            return self._cut()
        message = await self._receive()
        if message["type"] == "http.disconnect":
            CLIENT_GONE.set(True)  # in this request's context, which Django's tasks copy
            return self._cut()
        if message["type"] != "http.request":
            return message
        self._received += len(message.get("body", b""))
        if self._received > self._limit:
            self._state = "cut"
            return {**message, "more_body": False}
        if not message.get("more_body", False):
            self._state = "passed"
        return message

    def abandon(self) -> None:
        """The server cancelled the application (Daphne does, some seconds after the
        client left): let a disconnect still held back go, as a cancellation of Django's
        listener, which nobody will wait for now (its ``RequestAborted`` would be logged
        as an exception never retrieved)."""
        self._abandoned = True
        self._started.set()

    def _cut(self) -> Message:
        self._state = "cut"
        return {"type": "http.request", "body": b"", "more_body": False}


async def run(application: ASGIApp, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
    """Serve ``scope`` with ``application`` through a :class:`Guard`, with
    ``CLIENT_GONE`` unset before and restored after: a caller that drives the
    application through ``async_to_sync`` gets the request's context changes copied back
    into its own, so the flag would outlive the request there."""
    guard = Guard(receive, send, limit, declared_length(scope))
    token = CLIENT_GONE.set(False)
    try:
        await application(scope, guard.receive, guard.send)
    except asyncio.CancelledError:
        guard.abandon()
        raise
    finally:
        CLIENT_GONE.reset(token)


class BodyLimit:
    """Wrap an ASGI application so MCP request bodies are refused past the size limit
    without being read whole (``MAX_REQUEST_BYTES``, read per request)."""

    def __init__(self, application: ASGIApp) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http" and is_mcp_path(scope):
            await run(self.application, scope, receive, send, int(mcp_settings.MAX_REQUEST_BYTES))
        else:
            await self.application(scope, receive, send)
