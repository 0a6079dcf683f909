"""``MCPView``: the Streamable HTTP endpoint of one site.

By the time ``post`` runs, :class:`~django_mcp.middleware.MCPMiddleware` has admitted the
request; the view dispatches it and renders the reply as JSON, or as an SSE stream when the
request opted into notifications (see :mod:`django_mcp.http.streaming`). The view is
CSRF-exempt: MCP clients are not browsers holding a session cookie, every request is
authenticated on its own, and cross-site browser requests are stopped by the ``Origin``
check instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from django_mcp.http.responses import error_response, json_response, method_not_allowed
from django_mcp.http.streaming import (
    event_stream_response,
    is_asgi,
    respond_streaming,
    wants_stream,
)
from django_mcp.protocol.admission import Admitted
from django_mcp.protocol.errors import InternalError, MCPError
from django_mcp.protocol.methods import SUBSCRIPTIONS_LISTEN
from django_mcp.server.dispatch import Reply
from django_mcp.sites import MCPSite


@method_decorator(csrf_exempt, name="dispatch")
class MCPView(View):
    """Serve one :class:`MCPSite` over Streamable HTTP (POST only)."""

    site: ClassVar[MCPSite | None] = None
    http_method_names: ClassVar[list[str]] = ["post"]  # type: ignore[misc]

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        view = super().as_view(**initkwargs)
        view.mcp_site = initkwargs.get("site") or cls.site  # type: ignore[attr-defined]
        if view.mcp_site is None:  # type: ignore[attr-defined]
            raise ImproperlyConfigured(f"{cls.__name__}.as_view() needs a site")
        return view

    def http_method_not_allowed(
        self, request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        return method_not_allowed()

    def post(self, request: HttpRequest) -> HttpResponseBase:
        admission = getattr(request, "mcp_admission", None)
        if not isinstance(admission, Admitted):
            raise ImproperlyConfigured(
                "MCPView needs django_mcp.middleware.MCPMiddleware in MIDDLEWARE "
                "(system check django_mcp.E001)"
            )
        assert self.site is not None
        exchange = getattr(request, "mcp_exchange", None)

        def render(reply: Reply | None) -> HttpResponse:
            if reply is None:  # the handler thread died without a reply
                reply = Reply(admission.request.id, error=InternalError())
            if exchange is not None:
                exchange.reply = reply
            return self.render(reply)

        listen = admission.request.method == SUBSCRIPTIONS_LISTEN
        streaming = listen or wants_stream(admission, request)
        if streaming and exchange is not None:
            exchange.streamed = True  # a streamed reply is not known when the log is written
        if listen:
            return self.listen(admission, request, render)
        if streaming:
            return respond_streaming(self.site.server, admission, request, render)
        return render(self.site.server.handle(admission, request=request))

    def listen(
        self,
        admission: Admitted,
        request: HttpRequest,
        render: Callable[[Reply | None], HttpResponse],
    ) -> HttpResponseBase:
        """Open a ``subscriptions/listen`` stream (ASGI: async; WSGI: one thread per stream)."""
        assert self.site is not None
        try:
            listener = self.site.server.open_listen(admission)
        except MCPError as exc:
            return render(Reply(admission.request.id, error=exc))
        content = listener.events() if is_asgi(request) else listener.sync_events()
        return event_stream_response(content)

    def render(self, reply: Reply) -> HttpResponse:
        """The reply as one JSON-RPC response body."""
        if reply.error is not None:
            return error_response(reply.error, reply.request_id)
        return json_response(reply.to_message())
