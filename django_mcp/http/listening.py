"""Opening a ``subscriptions/listen`` stream over HTTP, within the stream limits.

The filter is validated first (-32602, basic/patterns/subscriptions.mdx); then the stream
takes a slot (:mod:`django_mcp.listen.limits`): over a limit the request is refused before
any stream opens, with HTTP 429 (this caller holds too many) or 503 (the server holds too
many, or is a WSGI worker that may not hold one), a ``Retry-After`` header and a JSON-RPC
error (-31000) naming the limit. The view's database connections are closed before the
stream starts waiting, so an idle stream holds none. Under WSGI the stream ends soon after
its client hangs up, where the server tells (:mod:`django_mcp.http.peer`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse

from django_mcp.http.client_ip import counted_address
from django_mcp.http.peer import hang_up_probe
from django_mcp.http.streaming import event_stream_response
from django_mcp.listen import limits
from django_mcp.listen.limits import is_asgi
from django_mcp.protocol.errors import ListenUnavailable, MCPError, TooManyCallerStreams
from django_mcp.server.dispatch import Reply

if TYPE_CHECKING:
    from django.http import HttpRequest

    from django_mcp.protocol.admission import Admitted
    from django_mcp.server.dispatch import MCPServer


def listen_response(
    server: MCPServer,
    admission: Admitted,
    request: HttpRequest,
    render: Callable[[Reply | None], HttpResponse],
) -> HttpResponseBase:
    """The listen stream for ``admission``, or the error that refuses it."""
    try:
        listener = server.open_listen(admission, request=request)
    except MCPError as exc:
        return render(Reply(admission.request.id, error=exc))
    try:
        slot = limits.acquire(request, counted_address(request.META))
    except (TooManyCallerStreams, ListenUnavailable) as exc:
        refusal = render(Reply(admission.request.id, error=exc))
        refusal["Retry-After"] = str(limits.RETRY_AFTER_SECONDS)
        return refusal
    listener.slot = slot
    try:
        limits.release_connections()
        content: Any = (
            listener.events()
            if is_asgi(request)
            else listener.sync_events(hang_up_probe(request.META))
        )
        response = event_stream_response(content, response_class=ListenStreamResponse)
    except BaseException:  # no stream will run to give the slot back
        slot.release()
        raise
    assert isinstance(response, ListenStreamResponse)
    response.slot = slot
    # A stream never iterated runs no ``finally``: its slot is given back when the response
    # is closed, and at the latest when it is collected.
    weakref.finalize(response, slot.release)
    return response


class ListenStreamResponse(StreamingHttpResponse):
    """A listen stream that gives its slot back when the server closes it."""

    slot: limits.Slot | None = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.slot is not None:
                self.slot.release()
