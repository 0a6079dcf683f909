"""The stdio transport: newline-delimited JSON-RPC on stdin and stdout
(basic/transports/stdio.mdx).

Each line read is one message, handed with no headers (``None``) to the same
``MCPServer.admit`` the HTTP middleware uses, so every protocol rule and error text is the
server's (docs/adr/0002-validate-once.md); this module only maps the outcomes to lines:

- ``Rejected``: a JSON-RPC error line, except for a notification, which is never answered,
  and for a JSON-RPC response the client sent, which is logged (stderr) and answers
  nothing. basic/transports/stdio.mdx: the client MUST NOT write responses, and what the
  server writes is responses to the client's requests, correlated by id, and
  notifications. The id of a response is that of a request of the server's (it sends none
  under 2026-07-28); an error echoing it would be read as the answer to the client's own
  request with that id, perhaps one in flight (basic/index.mdx: an error response carries
  the id of the request it corresponds to, and this one corresponds to none). HTTP
  answers the same message with 400 and -32600 with the id: there every POST gets an
  answer of its own, which no other request's answer can be mistaken for.
- An exception out of admission (a custom permission check with a bug, or one calling
  ``sys.exit()``, say) is logged and answered as one out of a handler, -32603 with the
  request's id; the next line is served as usual. Only ``KeyboardInterrupt`` stops the
  process.
- ``NotificationAccepted``: nothing is written; ``notifications/cancelled`` cancels the
  in-flight request it names (the stdio way to cancel, basic/patterns/cancellation.mdx).
- ``Admitted``: the request is known by its id until it is answered or cancelled
  (:mod:`.inflight`); one under an id still in flight is refused with -32600. It runs in a
  worker thread, so later lines (a cancellation) are read while it works; with
  ``STDIO_MAX_QUEUED_REQUESTS`` waiting for a worker, stdin is read no further until one
  starts (backpressure: the client's writes block; nothing is dropped). Its progress
  and log notifications are written as lines before its response; a cancelled request
  gets no response at all. A ``subscriptions/listen`` stream writes its acknowledgement
  and change notifications as lines until the server ends it with its result, or the
  client cancels it. Streams run on threads of their own, at most
  ``LISTEN_MAX_STREAMS_PER_CALLER`` at once (the process is one caller); one more is
  refused with ``TooManyCallerStreams``, so streams never hold every request worker.

A line over ``MAX_REQUEST_BYTES`` is read no further than that (:mod:`.lines`), and it gets
``RequestTooLarge`` (-32600), as HTTP refuses such a body before reading it. Its ``id``,
when the part read shows it, goes with the error: on stdio nothing else tells the client
which request was refused.

Only protocol messages go to stdout; anything else a handler prints is sent to stderr.
The caller is the process's user (from ``--user`` or the environment): stdio carries no
credentials of its own. That user is read again for every message (:mod:`.caller`), and
what HTTP answers with 401 or 403 (a site that requires authentication, a target's
``scopes_required``) is the same JSON-RPC error here, as a line
(:func:`~django_mcp.server.authorization.refusal`).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Any, Final, assert_never

from django.db import close_old_connections, connections
from django.http import HttpRequest

from django_mcp.conf import mcp_settings
from django_mcp.listen import limits
from django_mcp.protocol import jsonrpc, methods
from django_mcp.protocol.admission import Admitted, NotificationAccepted, Rejected
from django_mcp.protocol.errors import (
    InternalError,
    InvalidRequest,
    MCPError,
    RequestTooLarge,
    TooManyCallerStreams,
)
from django_mcp.server import authorization
from django_mcp.stdio.caller import ProcessUser
from django_mcp.stdio.inflight import DUPLICATE_ID, Call, InFlight
from django_mcp.stdio.lines import OversizedLine

if TYPE_CHECKING:
    from collections.abc import Iterable

    from django_mcp.listen.listener import PeerState
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer

logger = logging.getLogger("django_mcp.stdio")

#: Requests (and listen streams) handled at once; further ones wait for a free worker.
MAX_WORKERS: Final = 8
_DATA: Final = b"data:"
#: The answer to a listen request whose stream dropped (its channel layer failed): HTTP
#: closes the connection without the listen result; stdio has none to close, so this error.
LISTEN_DROPPED: Final = "The subscription stream dropped (its channel layer failed, or it lagged)"


def stdio_request(user: Any) -> HttpRequest:
    """The stand-in ``HttpRequest`` handlers and permission checks see: no headers, the
    process's user (``AnonymousUser`` when none was given)."""
    request = HttpRequest()
    request.method = "POST"
    request.META["SERVER_PROTOCOL"] = "stdio"
    request.user = user
    return request


class StdioServer:
    """Serve one site over a pair of byte streams until the input ends."""

    def __init__(
        self,
        server: MCPServer,
        output: IO[bytes],
        *,
        user: Any,
        max_workers: int = MAX_WORKERS,
        max_queued: int | None = None,
    ) -> None:
        self.server = server
        self.output = output
        #: The request of the process's user as it started (read again per message).
        self.request = stdio_request(user)
        self.user = ProcessUser(user)
        self._write_lock = threading.Lock()
        #: Requests and listen streams from their line to their answer, by id.
        self.inflight = InFlight()
        self._output_gone = False  # the client closed its end of stdout
        self._closing = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="mcp-stdio")
        # The pool's own queue has no bound: room for the requests running and as many
        # waiting, taken before a request is queued and given back once it is done.
        if max_queued is None:
            max_queued = int(mcp_settings.STDIO_MAX_QUEUED_REQUESTS)
        self._room = threading.BoundedSemaphore(max_workers + max(0, max_queued))
        # Listen streams hold their thread for minutes: on a pool of their own, bounded as
        # one HTTP caller's are, so that they never take every worker from the requests.
        max_listens = limits.max_streams_per_caller()
        self._listen_slots = threading.BoundedSemaphore(max_listens)
        self._listen_pool = ThreadPoolExecutor(
            max_workers=max_listens, thread_name_prefix="mcp-stdio-listen"
        )

    def serve(self, lines: Iterable[bytes | OversizedLine]) -> None:
        """Handle every line of ``lines``; return once each request has been answered."""
        try:
            for line in lines:
                if self._output_gone:
                    break  # nothing can be answered any more
                if isinstance(line, OversizedLine):
                    self.write(jsonrpc.error_response(RequestTooLarge(), line.request_id))
                elif message := line.strip(b" \t\r\n"):  # JSON's whitespace, no more
                    self.receive(message)
        finally:
            self._closing.set()  # open listen streams end; requests finish and answer
            self._pool.shutdown(wait=True)
            self._listen_pool.shutdown(wait=True)

    def write(self, message: dict[str, Any], *, during: Call | None = None) -> None:
        """One message, one line (compact JSON never contains a raw newline)."""
        self.write_line(jsonrpc.dumps(message), during=during)

    def write_line(self, data: bytes, *, during: Call | None = None) -> None:
        """Write one line; once the client has closed its end of stdout (a broken pipe),
        nothing more can be answered: every request in flight is cancelled, queued ones
        never run, and the server stops reading (:meth:`serve`), instead of running
        requests whose answers go nowhere and dying at the next write with a traceback.

        A notification of a request (``during``) is written only while that request is in
        flight (basic/patterns/progress.mdx: only for an active request), never after its
        response nor once it is cancelled: a thread its tool left behind may still hold
        its Context. Asked under the write lock, and the id is released before the response
        is written (which takes that lock too), so none can slip in after the response."""
        with self._write_lock:
            if self._output_gone or (during is not None and not self.inflight.holds(during)):
                return
            try:
                self.output.write(data + b"\n")
                self.output.flush()
            except (OSError, ValueError):
                # A broken pipe or reset, any other failed write (a client that made the
                # pipe non-blocking, an I/O error: the stream is no longer whole), or
                # ValueError: the file was closed under us.
                self._output_gone = True
            else:
                return
        logger.warning("stdout was closed by the client, or a write to it failed: stopping")
        self._closing.set()
        self.inflight.cancel_all()

    def receive(self, line: bytes) -> None:
        # Admission may query the database (the caller, permission checks) on this thread,
        # which lives as long as the process: recycle a broken or too old connection
        # first, as Django does at each HTTP request's start (guarded: a database gone
        # away fails this request, not the thread that reads stdin).
        try:
            close_old_connections()
            user, user_gone = self.user.current()
            request = stdio_request(user)
            admission = self.server.admit(line, None, request=request)
            refused: MCPError | None = user_gone
            if isinstance(admission, Admitted) and refused is None:
                refused = authorization.refusal(
                    self.server.site,
                    admission,
                    lambda: self.server.context_for(admission, request=request),
                )
        except KeyboardInterrupt:  # Ctrl-C: the process is meant to stop
            raise
        # A custom permission check with a bug, say: one request fails. ``SystemExit``
        # too (a check that calls ``sys.exit()``): here, on the thread that reads stdin,
        # it would end the whole process, with this request and every later one unanswered.
        except BaseException:
            logger.exception("stdio admission failed")
            self.refuse_failed(line)
            return
        if isinstance(admission, Rejected) and admission.is_response:
            logger.warning(
                "a JSON-RPC response (id %r) was read from stdin, where clients send none: ignored",
                admission.request_id,
            )
            return
        if refused is not None and not isinstance(admission, NotificationAccepted):
            # Where HTTP answers 401 or 403: the same JSON-RPC error, as a line (a user
            # gone is refused whatever the message, as HTTP refuses an invalid token
            # before it reads the body).
            if isinstance(admission, Admitted):
                self.write(jsonrpc.error_response(refused, admission.request.id))
            elif not admission.is_notification:
                self.write(jsonrpc.error_response(refused, admission.request_id))
            return
        match admission:
            case Rejected():
                if not admission.is_notification:
                    self.write(jsonrpc.error_response(admission.error, admission.request_id))
            case NotificationAccepted():
                if admission.notification.method == methods.NOTIFICATION_CANCELLED:
                    self.cancel((admission.notification.params or {}).get("requestId"))
            case Admitted():
                self.start(admission, request)
            case _:
                assert_never(admission)

    def start(self, admitted: Admitted, request: HttpRequest) -> None:
        """Run an admitted request, known by its id from now on (:mod:`.inflight`): a
        cancellation on the next line must find it, queued or not yet started, and a
        request under an id still in flight is refused."""
        request_id = admitted.request.id
        call = self.inflight.admit(request_id)
        if call is None:
            self.write(jsonrpc.error_response(InvalidRequest(DUPLICATE_ID), request_id))
        elif admitted.request.method != methods.SUBSCRIPTIONS_LISTEN:
            self.submit(call, admitted, request)
        elif self._listen_slots.acquire(blocking=False):
            call.stream = threading.Event()
            self._listen_pool.submit(self.listen, call, admitted, request)
        else:  # as HTTP answers a caller over its limit (there, with a 429)
            self.inflight.release(call)
            self.write(jsonrpc.error_response(TooManyCallerStreams("caller"), request_id))

    def refuse_failed(self, line: bytes) -> None:
        """Answer the request on ``line``, whose admission raised, with -32603, as a
        handler that raises is answered (:meth:`run`); a notification gets nothing. A
        ``notifications/cancelled`` still cancels: it needs no database, and reading the
        process's user may have failed only because the database is down."""
        try:
            message = jsonrpc.parse_message(line)
        except Exception:  # admission read it, so this is no request to answer
            return
        if isinstance(message, jsonrpc.Request):
            self.write(jsonrpc.error_response(InternalError(), message.id))
        elif message.method == methods.NOTIFICATION_CANCELLED and isinstance(message.params, dict):
            self.cancel(message.params.get("requestId"))

    def cancel(self, request_id: Any) -> None:
        """Cancel the in-flight request ``request_id``; an unknown or finished one is
        ignored (the race is allowed), and so is one that is no request id at all (a list
        would not hash, and ``true`` would be taken for the id ``1``); ``1.0`` is the id
        ``1`` (:func:`~.jsonrpc.is_valid_id`) and cancels it, whichever way it was sent."""
        if jsonrpc.is_valid_id(request_id):
            self.inflight.cancel(request_id)

    def submit(self, call: Call, admitted: Admitted, request: HttpRequest) -> None:
        """Queue a request for a worker. Until a worker takes it, a cancellation takes it
        out of the queue: it never runs and gets no response, as one cancelled while it
        runs (basic/patterns/cancellation.mdx: the receiver SHOULD stop processing it).

        With ``STDIO_MAX_QUEUED_REQUESTS`` already waiting, this waits for room first, and
        so does the reading of stdin: a client that writes faster than it is served is
        held back by the pipe instead of growing the queue without bound, and no request
        is dropped. (A cancellation written meanwhile is read in its turn.)"""
        self._room.acquire()
        if call.cancelled:  # stdout went away meanwhile: nothing can be answered
            self._room.release()
            return

        def done(_: Future[None]) -> None:
            self.inflight.release(call)
            self._room.release()

        call.future = self._pool.submit(self.run, admitted, call, request)
        call.future.add_done_callback(done)

    def listen(self, call: Call, admitted: Admitted, request: HttpRequest) -> None:
        """Write a ``subscriptions/listen`` stream's messages as lines, until the server
        ends it (with its result, or with -32603 when its channel layer failed:
        :data:`LISTEN_DROPPED`), the client cancels it (sets ``stop``: nothing more is
        written, not even the acknowledgement if it came first) or the input ends (then
        with its result too). The stream asks its ``peer`` at every wake-up, at least every
        ``WSGI_POLL_SECONDS``, which bounds how long either takes to notice.

        A stream that raises (a bug, say) is answered as a request whose handler raises,
        with -32603 (unless it was answered or cancelled already): the client must not
        wait for ever on a thread that ended silently. So is one that raises ``SystemExit``
        or any other ``BaseException``, as in :meth:`run`: on a thread of its own it stops
        no process, and the pool would keep it unseen."""
        try:
            self._stream(admitted, request, call)
        except BaseException:
            logger.exception("stdio listen stream %r failed", admitted.request.id)
            if self.inflight.holds(call) and self.inflight.release(call):
                self.write(jsonrpc.error_response(InternalError(), admitted.request.id))
        finally:
            self.inflight.release(call)
            self._listen_slots.release()

    def _stream(self, admitted: Admitted, request: HttpRequest | None, call: Call) -> None:
        request_id = admitted.request.id
        stop = call.stream
        assert stop is not None
        try:
            listener = self.server.open_listen(admitted, request=request or self.request)
        except MCPError as exc:
            if self.inflight.release(call):
                self.write(jsonrpc.error_response(exc, request_id))
            return

        def peer() -> PeerState:
            """The client cancelled the stream (it gets nothing more), or the input ended
            (it gets the closing result, as at an HTTP server's shutdown)."""
            if stop.is_set():
                return "gone"
            return "ending" if self._closing.is_set() else "open"

        events = listener.sync_events(peer=peer)
        try:
            for chunk in events:
                if stop.is_set():
                    return
                if chunk.startswith(_DATA):  # one event, one message; comments are skipped
                    line = chunk[len(_DATA) :].strip()
                    if not _is_response(line):
                        self.write_line(line, during=call)  # none once it is cancelled
                    elif self.inflight.release(call):
                        self.write_line(line)  # its result: the id is free once read
                    else:
                        return
            if listener.dropped and self.inflight.release(call):
                # No connection to drop here: the request is answered.
                self.write(jsonrpc.error_response(InternalError(LISTEN_DROPPED), request_id))
        finally:
            getattr(events, "close", lambda: None)()  # a generator: run its cleanup now

    def run(self, admitted: Admitted, call: Call, request: HttpRequest | None = None) -> None:
        """Handle one request in a worker thread and write its notifications and reply
        (``call``: the request as :meth:`start` made it known)."""
        request_id = admitted.request.id

        def on_context(ctx: Context) -> None:
            self.inflight.started(call, ctx)

        def emit(note: dict[str, Any]) -> None:
            if not self._cancelled(call):
                self.write(jsonrpc.notification(note["method"], note.get("params")), during=call)

        try:
            close_old_connections()  # in the guard: a failure here is answered too
            reply = self.server.handle(
                admitted, request=request or self.request, emit=emit, on_context=on_context
            )
            # Only the client (or a broken stdout) silences it, not TOOL_TIMEOUT (as on HTTP).
            if call.cancelled or not self.inflight.release(call):
                logger.info("request %r was cancelled; no response is sent", request_id)
                return
            self.write(reply.to_message())
        # A worker must not end silently: the client would wait for ever. BaseException
        # too: ``SystemExit`` from a tool (a wrapped CLI's ``sys.exit()``) stops no process
        # from a worker thread; the pool would keep it on the future and nothing answered.
        except BaseException:
            logger.exception("stdio request %r failed", request_id)
            if self.inflight.release(call):
                self.write(jsonrpc.error_response(InternalError(), request_id))
        finally:
            self.inflight.release(call)
            connections.close_all()

    @staticmethod
    def _cancelled(call: Call) -> bool:
        """Whether ``call`` was cancelled, by the client or by its own Context."""
        return call.cancelled or (call.context is not None and call.context.cancelled)


def _is_response(line: bytes) -> bool:
    """Whether a listen stream's ``line`` is its response (its result), not a notification."""
    message = jsonrpc.decode_json(line)
    return isinstance(message, dict) and "method" not in message
