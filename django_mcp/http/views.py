"""``MCPView``: the Streamable HTTP endpoint of one site.

By the time ``post`` runs, :class:`~django_mcp.middleware.MCPMiddleware` has admitted the
request; the view dispatches it and renders the reply as JSON, or as an SSE stream when the
request opted into notifications (see :mod:`django_mcp.http.streaming`). The view is
CSRF-exempt: MCP clients are not browsers holding a session cookie, every request is
authenticated on its own, and cross-site browser requests are stopped by the ``Origin``
check instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.views import View

from django_mcp.http.exchange import exchange_of
from django_mcp.http.framing import handle_in_savepoint
from django_mcp.http.listening import listen_response
from django_mcp.http.responses import json_response, method_not_allowed, reply_response
from django_mcp.http.streaming import respond_streaming, wants_stream
from django_mcp.protocol import jsonrpc, sse
from django_mcp.protocol.admission import Admitted
from django_mcp.protocol.errors import InternalError, InvalidRequest
from django_mcp.protocol.methods import SUBSCRIPTIONS_LISTEN
from django_mcp.server.dispatch import MCPServer, Reply
from django_mcp.server.outage import resolved_user
from django_mcp.sites import MCPSite

logger = logging.getLogger("django_mcp")


#: The answer to ``subscriptions/listen`` from a client whose ``Accept`` leaves SSE out.
LISTEN_NEEDS_SSE = (
    "subscriptions/listen is answered with a text/event-stream, which this request's "
    "Accept header does not admit"
)


class MCPView(View):
    """Serve one :class:`MCPSite` over Streamable HTTP (POST only).

    It needs :class:`~django_mcp.http.middleware.MCPMiddleware`, which admits the request
    and hands over the admission through :func:`~django_mcp.http.exchange.exchange_of`.
    Routed without it, every request is answered 500 with a JSON-RPC internal error and
    the misconfiguration is logged (ADR 0004); system check ``django_mcp.E001`` reports it
    at start-up.
    """

    site: ClassVar[MCPSite | None] = None
    http_method_names: ClassVar[list[str]] = ["post"]  # type: ignore[misc]

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        site = initkwargs.get("site") or cls.site
        if site is None:
            raise ImproperlyConfigured(f"{cls.__name__}.as_view() needs a site")
        view = super().as_view(**initkwargs)
        # What csrf_exempt does (the attribute CsrfViewMiddleware reads), without the
        # wrapper function it adds: one call less per request.
        view.csrf_exempt = True  # type: ignore[attr-defined]
        # What the middleware looks for: its presence marks the view as an MCP endpoint.
        view.mcp_server = MCPServer(site)  # type: ignore[attr-defined]
        # This very function, when a POST to it runs nothing but MCPView's own code
        # (MCPView itself, no initkwargs but the site): only then may the native ASGI path
        # serve a call without calling it (http.native.plain_post). The function itself
        # rather than True, so that a decorator's wrapper, which copies the attribute
        # with functools.wraps, is not mistaken for it and still runs.
        view.mcp_plain_post = view if cls._plain_post(initkwargs) else None  # type: ignore[attr-defined]
        return view

    @classmethod
    def _plain_post(cls, initkwargs: dict[str, Any]) -> bool:
        """Whether ``cls.as_view(**initkwargs)`` answers a POST with nothing but MCPView's
        own code: MCPView itself (a subclass or a mixin may change the answer in more
        ways than a check could list: a method, ``__init__``, ``render``, a descriptor,
        a metaclass) with no ``as_view`` argument but the site."""
        return cls is MCPView and set(initkwargs) <= {"site"}

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        """Run the admission the middleware deferred to this thread (under ASGI, when it
        may query the database), before anything else (see
        :class:`~django_mcp.http.middleware.MCPMiddleware`); then ``post`` for a POST
        without ``View.dispatch``'s lookup of the handler by name, anything else as
        ``View`` does it (405)."""
        exchange = exchange_of(request)
        if exchange is not None and exchange.deferred_admission is not None:
            refused = exchange.admit_deferred()
            if refused is not None:
                return refused
        if request.method == "POST" and "post" in self.http_method_names:
            return self.post(request, *args, **kwargs)
        response: HttpResponseBase = super().dispatch(request, *args, **kwargs)
        return response

    def http_method_not_allowed(
        self, request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        return method_not_allowed()

    def post(self, request: HttpRequest) -> HttpResponseBase:
        exchange = exchange_of(request)
        admission = exchange.admitted if exchange is not None else None
        if exchange is None or admission is None:
            logger.error(
                "MCPView at %r ran without django_mcp.middleware.MCPMiddleware in MIDDLEWARE "
                "(system check django_mcp.E001); answering 500",
                request.path,
            )
            message = jsonrpc.error_response(InternalError("Server misconfigured"), None)
            return json_response(message, status=500)
        server = exchange.server
        # Resolved here, off the event loop; None if the database is down (see outage).
        exchange.user = resolved_user(request)
        listen = admission.request.method == SUBSCRIPTIONS_LISTEN
        if listen and sse.refuses_event_stream(request.META.get("HTTP_ACCEPT")):
            # Only ever answered as a stream: refused, never streamed to a client whose
            # Accept leaves text/event-stream out (basic/transports/streamable-http.mdx).
            refused = InvalidRequest(LISTEN_NEEDS_SSE)
            exchange.reply = reply = Reply(admission.request.id, error=refused)
            return self.render(reply)
        streaming = listen or wants_stream(admission, request)
        exchange.streamed = streaming  # a streamed reply is not known when the log is written
        if not streaming:  # the usual case: one reply, rendered now
            exchange.reply = reply = handle_in_savepoint(request, server, admission)
            return self.render(reply)

        def render(reply: Reply | None) -> HttpResponse:
            if reply is None:  # the handler thread died without a reply
                reply = Reply(admission.request.id, error=InternalError())
            exchange.reply = reply
            return self.render(reply)

        if listen:
            return self.listen(server, admission, request, render)
        return respond_streaming(server, admission, request, render)

    def listen(
        self,
        server: MCPServer,
        admission: Admitted,
        request: HttpRequest,
        render: Callable[[Reply | None], HttpResponse],
    ) -> HttpResponseBase:
        """Open a ``subscriptions/listen`` stream within the stream limits (ASGI: async;
        WSGI: one thread per stream); see :mod:`django_mcp.http.listening`."""
        return listen_response(server, admission, request, render)

    def render(self, reply: Reply) -> HttpResponse:
        """The reply as one JSON-RPC response body."""
        return reply_response(reply)
