"""The requests one stdio process has in flight, by id: what a ``notifications/cancelled``
names, and what the id of a new request must not repeat.

basic/index.mdx, "Requests": a request's id "MUST NOT match the ID of any other request
the sender has issued and not yet received a response for". stdio has one channel for
every request, so the id is all that ties a response or a cancellation to its request
(basic/transports/stdio.mdx): a second request under an id still in flight would make
both ambiguous. It is refused with -32600 (:data:`DUPLICATE_ID`, with that id, as every
request gets a response), and the first request runs on, cancellable as before.

An id is in flight from the line that carried it until its response is written or the
client cancels it (basic/patterns/cancellation.mdx: a cancelled request gets no response,
so the client waits for nothing more). It is released *before* the response is written,
since the client may reuse it as soon as it reads that response, and at the cancellation,
even while the cancelled request winds down. Each request is a :class:`Call` of its own:
what a request does once its id is released never touches a later one with that id.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from concurrent.futures import Future

    from django_mcp.protocol.jsonrpc import RequestId
    from django_mcp.server.context import Context

#: The answer (-32600) to a request whose id is already in flight.
DUPLICATE_ID: Final = "The request id is already in use by a request in progress"


@dataclass(eq=False, slots=True)
class Call:
    """One request, from its line to its response (or its cancellation)."""

    request_id: RequestId
    #: A request waiting for a worker, then running: cancelling it takes it out of the queue.
    future: Future[None] | None = None
    #: The request's Context, once its handler has one: cancelling it stops the handler.
    context: Context | None = None
    #: A ``subscriptions/listen`` stream's stop signal.
    stream: threading.Event | None = None
    cancelled: bool = False


class InFlight:
    """The calls in flight, one per id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[RequestId, Call] = {}

    def __contains__(self, request_id: object) -> bool:
        with self._lock:
            return request_id in self._calls

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)

    def admit(self, request_id: RequestId) -> Call | None:
        """A new call for ``request_id``, or None when that id is in flight already."""
        with self._lock:
            if request_id in self._calls:
                return None
            call = self._calls[request_id] = Call(request_id)
            return call

    def started(self, call: Call, context: Context) -> None:
        """``call``'s handler has its Context: cancelled at once if the client (or a
        broken stdout) cancelled the call before."""
        with self._lock:
            call.context = context
            cancelled = call.cancelled
        if cancelled:
            context.cancel()

    def holds(self, call: Call) -> bool:
        """Whether ``call`` is still in flight: neither answered nor cancelled."""
        with self._lock:
            return self._calls.get(call.request_id) is call

    def release(self, call: Call) -> bool:
        """Take ``call``'s id out of flight, right before its response is written (or once
        it ended); whether it may still be answered, that is, was not cancelled."""
        with self._lock:
            if self._calls.get(call.request_id) is call:
                del self._calls[call.request_id]
            return not call.cancelled

    def cancel(self, request_id: RequestId) -> None:
        """Cancel the call in flight under ``request_id``; none (an unknown or finished
        request: the race basic/patterns/cancellation.mdx allows) is ignored."""
        with self._lock:
            call = self._calls.pop(request_id, None)
            if call is not None:
                call.cancelled = True
        if call is not None:
            _stop(call)

    def cancel_all(self) -> None:
        """Cancel every call in flight (nothing can be answered any more)."""
        with self._lock:
            calls = list(self._calls.values())
            self._calls.clear()
            for call in calls:
                call.cancelled = True
        for call in calls:
            _stop(call)


def _stop(call: Call) -> None:
    """Stop a cancelled call wherever it is: waiting for a worker (it never runs), running
    (its Context is cancelled; one that has none yet gets it cancelled by
    :meth:`InFlight.started`), or streaming (it writes nothing more)."""
    if call.future is not None:
        call.future.cancel()
    if call.context is not None:
        call.context.cancel()
    if call.stream is not None:
        call.stream.set()
