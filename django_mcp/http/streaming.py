"""Answering one request as an SSE stream when it has notifications to carry.

A request that set a ``progressToken`` or a ``logLevel``, from a client that accepts
``text/event-stream``, may receive ``notifications/progress`` and ``notifications/message``
before its response (basic/patterns/progress.mdx, server/utilities/logging.mdx).

- Under ASGI the handler runs in a worker thread. The view waits for its first
  notification or its reply, at most ``LISTEN_KEEPALIVE_SECONDS``: a reply that comes first
  is sent as plain JSON (so errors keep their HTTP status); a notification opens the
  stream, and so does the wait running out, with a keep-alive comment (a proxy's idle
  timeout would otherwise cut a slow tool that has not reported yet; a server may answer
  any request with either, basic/transports/streamable-http.mdx); the reply ends it. If
  the client closes the stream, the request is cancelled (basic/patterns/cancellation.mdx):
  the context is marked cancelled, an async handler's task is cancelled, a sync handler
  stops at its next ``report_progress``, and nothing more is written.
- Under WSGI notifications cannot interleave with a running handler, so they are
  collected and sent, in order, before the reply on one stream; nothing is written
  before the handler ends, so no keep-alive either.

The worker threads of the ASGI case are bounded: at most ``MAX_LIVE_STREAMS`` run at once in
a process (each is a thread, and may hold database connections; a client could otherwise
open as many as it likes). A request that finds them all taken is not refused: progress
and log notifications are optional (basic/patterns/progress.mdx: a receiver MAY send
progress), so it is answered as under WSGI, in the thread already serving the view, its
notifications collected and sent before the reply on one stream (plain JSON when there
are none). The client sees the same messages in the same order, only not live; such a
request cannot be cancelled by a disconnect, as under WSGI (``TOOL_TIMEOUT`` still bounds
a tool). A slot is given back when the thread ends, however it ends (a reply, an
exception, a cancelled or abandoned stream).

The native ASGI path (:mod:`django_mcp.http.native`) counts these threads here too, not
against ``NATIVE_WORKER_THREADS``: its view runs in a pooled worker that waits for the
handler's first notification (up to ``LISTEN_KEEPALIVE_SECONDS``), so a handler run in the
same pool could wait for a worker held by its own view (all workers waiting for handlers
queued behind them). So a process on that path runs at most ``NATIVE_WORKER_THREADS``
plus ``MAX_LIVE_STREAMS`` threads for MCP requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Final

from django.db import close_old_connections, connections
from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse

from django_mcp.http.client_ip import counted_address
from django_mcp.http.exchange import exchange_of
from django_mcp.http.framing import handle_in_savepoint
from django_mcp.http.live_slots import give_slot, take_slot
from django_mcp.http.live_slots import live_streams as live_streams  # the public names,
from django_mcp.http.live_slots import max_live_streams as max_live_streams  # kept here
from django_mcp.listen import limits
from django_mcp.listen.limits import caller_key, is_asgi
from django_mcp.protocol import jsonrpc, sse
from django_mcp.protocol.errors import InternalError

if TYPE_CHECKING:
    from django.http import HttpRequest

    from django_mcp.protocol.admission import Admitted
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer, Reply

logger = logging.getLogger("django_mcp")

_DONE: Final = object()
#: What :meth:`LiveStream.first_message` gives when the handler stayed quiet for the whole
#: wait: the answer is a stream from then on, and it starts with a keep-alive comment.
QUIET: Final = object()

#: Streams whose response was freed before they ended (:meth:`LiveStream.abandoned`, a
#: finalizer). A finalizer may run inside a garbage collection, on any thread, even one
#: holding the request log's lock, so it only queues the stream (``SimpleQueue.put`` is
#: safe there); one daemon thread ends them, and their records are written from it.
_ENDED: queue.SimpleQueue[LiveStream] = queue.SimpleQueue()
_end_thread_lock = threading.Lock()
_end_thread: threading.Thread | None = None


def _start_stream_end_thread() -> None:
    """Start the thread that ends abandoned streams, once (from ordinary code, never from
    a finalizer, which must not start threads)."""
    global _end_thread
    with _end_thread_lock:
        if _end_thread is None or not _end_thread.is_alive():
            _end_thread = threading.Thread(target=_end_streams, name="mcp-stream-end", daemon=True)
            _end_thread.start()


def _forget_stream_end_thread() -> None:
    """In a forked child: the parent's threads and queued streams are not the child's."""
    global _ENDED, _end_thread_lock, _end_thread
    _ENDED, _end_thread_lock, _end_thread = queue.SimpleQueue(), threading.Lock(), None


os.register_at_fork(after_in_child=_forget_stream_end_thread)


def _end_streams() -> None:
    while True:
        _end_one(_ENDED.get())


def _end_one(stream: LiveStream) -> None:
    """End one dropped stream. A function of its own, so that no frame keeps the stream
    (and its request) alive while the thread waits for the next one."""
    try:
        stream._end()
    except Exception:  # its record is best-effort already; never stop this thread
        logger.exception("django-mcp could not end an abandoned stream")


def keep_alive_seconds() -> float:
    """``LISTEN_KEEPALIVE_SECONDS``: the longest a live stream writes nothing, and so the
    longest the view waits for a handler's first message before it opens the stream."""
    return limits.keep_alive_seconds()


def wants_stream(admitted: Admitted, request: HttpRequest) -> bool:
    """Whether this request opted into request-scoped notifications and can receive SSE."""
    meta = admitted.meta
    if meta.progress_token is None and meta.log_level is None:
        return False
    return sse.accepts_event_stream(request.META.get("HTTP_ACCEPT"))


def event_stream_response(
    content: Any, response_class: type[StreamingHttpResponse] = StreamingHttpResponse
) -> StreamingHttpResponse:
    response = response_class(content, content_type=sse.CONTENT_TYPE)
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def notification_message(note: dict[str, Any]) -> dict[str, Any]:
    return jsonrpc.notification(note["method"], note.get("params"))


def buffered(
    server: MCPServer, admitted: Admitted, request: HttpRequest
) -> tuple[Reply, list[dict[str, Any]]]:
    """Run the handler here, collecting its notifications (the WSGI path)."""
    notes: list[dict[str, Any]] = []
    # This runs in the view, in its transaction.
    reply = handle_in_savepoint(request, server, admitted, notes.append)
    return reply, notes


def buffered_events(notes: list[dict[str, Any]], reply: Reply) -> Iterator[bytes]:
    for note in notes:
        yield sse.event(notification_message(note))
    yield sse.event(reply.to_message())


class LiveStream:
    """A handler running in a worker thread, its notifications handed to the stream.

    Items after the first wait in a list until the stream starts on the event loop; from
    then on the handler thread hands each one to the loop's queue directly. No thread is
    ever parked waiting for the next item: a blocking ``queue.get`` in the loop's default
    executor (a few threads) let a handful of slow streams stall every other one.
    """

    def __init__(
        self, server: MCPServer, admitted: Admitted, request: HttpRequest, *, caller: str
    ) -> None:
        """``caller``: whom the stream's thread is counted against
        (``MAX_LIVE_STREAMS_PER_CALLER``)."""
        self.first = threading.Event()
        self.first_item: Any = None
        self.context: Context | None = None
        self._lock = threading.Lock()
        self._pending: list[Any] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._started = False
        self._ended = False
        self._final: Reply | None = None
        self._on_end: Callable[[Reply | None], None] | None = None
        self._caller = caller
        self._thread = threading.Thread(
            target=self._run, args=(server, admitted, request), name="mcp-stream", daemon=True
        )

    def start(self) -> bool:
        """Start the handler's thread if a ``MAX_LIVE_STREAMS`` slot is free (and the
        caller has one of its share left) and the system gives a thread; False when
        nothing was started (answer it buffered)."""
        if not take_slot(self._caller):
            return False
        try:
            self._thread.start()
        except RuntimeError:  # "can't start new thread": answered as at the limit
            give_slot(self._caller)
            logger.warning("django-mcp could not start a live stream's thread", exc_info=True)
            return False
        return True

    def first_message(self, within: float | None = None) -> Any:
        """The handler's first item (a notification dict or the Reply), once it is known;
        :data:`QUIET` if ``within`` seconds pass first. Then the wait takes the first
        place itself, under the lock ``_put`` takes it under, so every later item (the
        reply too) goes to the stream: a reply that comes in the same instant is not
        answered as JSON while the view has already chosen the stream."""
        if not self.first.wait(within):
            with self._lock:
                if not self.first.is_set():
                    self.first_item = QUIET
                    self.first.set()
        return self.first_item

    def _put(self, item: Any) -> None:
        with self._lock:
            if not self.first.is_set():
                self.first_item = item
                self.first.set()
                return
            if self._loop is None or self._queue is None:
                self._pending.append(item)
                return
            loop, target = self._loop, self._queue
        # A closed loop (RuntimeError) means nobody reads this stream any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(target.put_nowait, item)

    def _run(self, server: MCPServer, admitted: Admitted, request: HttpRequest) -> None:
        try:
            self._handle(server, admitted, request)
        finally:
            give_slot(self._caller)  # however the thread ends

    def _handle(self, server: MCPServer, admitted: Admitted, request: HttpRequest) -> None:
        reply: Any = None
        try:
            close_old_connections()

            def on_context(context: Context) -> None:
                self.context = context

            reply = server.handle(admitted, request=request, emit=self._put, on_context=on_context)
        finally:
            connections.close_all()
            if reply is None:  # the handler died without one: the client still gets an answer
                from django_mcp.server.dispatch import Reply  # not at import: see native.py

                reply = Reply(admitted.request.id, error=InternalError())
            self._put(reply)
            self._put(_DONE)

    def cancel(self) -> None:
        """The client went away: stop the handler as soon as it can notice."""
        if self.context is not None:
            self.context.cancel()

    def abandoned(self) -> None:
        """The response was dropped before its stream started: the client went away
        while the view waited for the first notification, at most
        ``LISTEN_KEEPALIVE_SECONDS`` (Django cancels the request but cannot stop the view's
        thread, so the stream never runs). Cancel the handler.

        Called by a ``weakref.finalize`` on the response, which CPython runs as soon as
        Django lets go of the unsent response."""
        if not self._started and self._thread.is_alive():
            self.cancel()
        if not self._ended:  # a plain read: safe in a finalizer
            _ENDED.put(self)  # ended on the stream-end thread: see _end_streams

    def when_ended(self, action: Callable[[Reply | None], None]) -> None:
        """Run ``action`` with the final reply once the stream ends (None: it ended
        before its reply, the client gone); at once if it has ended already."""
        with self._lock:
            if not self._ended:
                self._on_end = action
                return
        action(self._final)

    def _end(self) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
            action, self._on_end = self._on_end, None
        if action is not None:
            action(self._final)

    def _attach(self) -> asyncio.Queue[Any]:
        """Receive further items on the running loop; queue what is already pending."""
        items: asyncio.Queue[Any] = asyncio.Queue()
        self._started = True
        with self._lock:
            for item in self._pending:
                items.put_nowait(item)
            self._pending.clear()
            self._loop, self._queue = asyncio.get_running_loop(), items
        return items

    async def events(self) -> AsyncIterator[bytes]:
        """The SSE events from the first notification (a keep-alive comment when the
        handler was :data:`QUIET` until the view stopped waiting), ending with the reply,
        with a keep-alive comment after every ``LISTEN_KEEPALIVE_SECONDS`` the handler is
        quiet: a slow tool's stream would otherwise be cut by a proxy's idle timeout
        (nginx's ``proxy_read_timeout``, 60 s by default), and with it the reply. Waiting on the
        queue with a timeout loses nothing: an item stays queued until a ``get`` takes it.
        ``asyncio.timeout``, not ``wait_for``: on Python 3.11 ``wait_for`` returns an item
        that arrives in the turn the task is cancelled and drops the cancellation, so a
        client's disconnect did not cancel the handler."""
        items = self._attach()
        keep_alive = keep_alive_seconds()
        try:
            first = self.first_item
            yield sse.KEEP_ALIVE if first is QUIET else sse.event(notification_message(first))
            while True:
                try:
                    async with asyncio.timeout(keep_alive):
                        item = await items.get()
                except TimeoutError:
                    yield sse.KEEP_ALIVE
                    continue
                if item is _DONE:
                    return
                if isinstance(item, dict):
                    yield sse.event(notification_message(item))
                else:
                    self._final = item  # what the request log records, once it is on its way
                    yield sse.event(item.to_message())
                    return
        except (asyncio.CancelledError, GeneratorExit):
            self.cancel()
            raise
        finally:
            self._end()


def respond_streaming(
    server: MCPServer,
    admitted: Admitted,
    request: HttpRequest,
    render_json: Callable[[Reply | None], HttpResponse],
) -> HttpResponseBase:
    """Serve a request that may stream: plain JSON if the reply came before any
    notification and within ``LISTEN_KEEPALIVE_SECONDS``; an SSE stream otherwise.

    Live under ASGI while a ``MAX_LIVE_STREAMS`` slot is free; buffered otherwise."""
    stream = None
    if is_asgi(request):
        caller = caller_key(request, counted_address(request.META))
        stream = LiveStream(server, admitted, request, caller=caller)
    if stream is not None and stream.start():
        first = stream.first_message(within=keep_alive_seconds())
        if first is not QUIET and not isinstance(first, dict):
            return render_json(first)
        response = event_stream_response(stream.events())
        _start_stream_end_thread()  # before the finalizer that may queue the stream
        weakref.finalize(response, stream.abandoned)
        exchange = exchange_of(request)
        if exchange is not None:
            exchange.when_stream_ends = stream.when_ended
        return response
    reply, notes = buffered(server, admitted, request)
    if not notes:
        return render_json(reply)
    exchange = exchange_of(request)
    if exchange is not None:
        exchange.reply = reply  # known before the stream starts: recorded with it
    events = buffered_events(notes, reply)
    if stream is not None:  # ASGI past the limit: Django serves only async iterators there
        return event_stream_response(_as_async(list(events)))
    return event_stream_response(events)


async def _as_async(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event
