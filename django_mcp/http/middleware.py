"""``MCPMiddleware``: the HTTP face of admission (design section 3).

For requests routed to an :class:`~django_mcp.http.views.MCPView` only, it answers non-POST with
405, checks ``Origin`` (403) and ``Host``, reads the body once under a size limit, asks the
site's server to admit the message (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``
and ``Mcp-Param-*`` are checked there, against the body) and answers every rejection before
the view runs. After the response it records the exchange. Other URLs are never touched.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from django_mcp.conf import mcp_settings
from django_mcp.http.origins import origin_allowed
from django_mcp.http.responses import admission_response, error_response, method_not_allowed
from django_mcp.protocol import methods
from django_mcp.protocol.admission import Admission, Admitted, NotificationAccepted, Rejected
from django_mcp.protocol.errors import ForbiddenOrigin, RequestTooLarge
from django_mcp.protocol.headers import normalise
from django_mcp.requestlog import recorder
from django_mcp.requestlog.records import Outcome, RequestRecord, truncated_params

if TYPE_CHECKING:
    from django_mcp.server.dispatch import Reply
    from django_mcp.sites import MCPSite


class Exchange:
    """What the middleware learns about one MCP request while it is served."""

    def __init__(self, site: MCPSite) -> None:
        self.site = site
        self.started_at: datetime.datetime = timezone.now()
        self.started = time.perf_counter()
        self.admission: Admission | None = None
        self.reply: Reply | None = None
        self.streamed = False

    def record(self, request: HttpRequest, response: HttpResponse) -> RequestRecord:
        admission, reply = self.admission, self.reply
        method = target = request_id = declared = served = how = ""
        client_name = client_version = ""
        params: Any = None
        error_code: int | None = None
        outcome: Outcome = "protocol_error"
        if isinstance(admission, Admitted):
            message = admission.request
            method, request_id, params = message.method, str(message.id), message.params
            field = methods.NAME_FIELDS.get(method)
            target = str((message.params or {}).get(field, "")) if field else ""
            declared = admission.revision.declared
            served, how = admission.revision.served, admission.revision.how.value
            if admission.meta.client_info is not None:
                client_name = admission.meta.client_info.name
                client_version = admission.meta.client_info.version
            if reply is not None:
                outcome = reply.outcome
                error_code = reply.error.code if reply.error is not None else None
            elif self.streamed:
                outcome = "ok"  # the stream is open; its final reply is not known yet
        elif isinstance(admission, NotificationAccepted):
            method, outcome = admission.notification.method, "notification"
        elif isinstance(admission, Rejected):
            method, target = admission.method or "", admission.target or ""
            request_id = "" if admission.request_id is None else str(admission.request_id)
            declared = admission.declared_revision or ""
            error_code = admission.error.code
        user = getattr(request, "user", None)
        authenticated = bool(user is not None and user.is_authenticated)
        return RequestRecord(
            started_at=self.started_at,
            site=self.site.name,
            method=method[:100],
            target=target[:255],
            request_id=request_id[:100],
            declared_revision=declared[:50] if isinstance(declared, str) else "",
            served_revision=served,
            served_how=how,
            client_name=client_name[:200],
            client_version=client_version[:100],
            user_id=user.pk if authenticated and user is not None else None,
            username=user.get_username()[:150] if authenticated and user is not None else "",
            outcome=outcome,
            error_code=error_code,
            http_status=response.status_code,
            duration_ms=(time.perf_counter() - self.started) * 1000,
            params=(
                truncated_params(params, int(mcp_settings.REQUEST_LOG_PARAMS_MAX_CHARS))
                if mcp_settings.REQUEST_LOG_PARAMS and params is not None
                else None
            ),
        )


def read_body(request: HttpRequest, limit: int) -> bytes:
    """The request body, read once, refusing anything over ``limit`` bytes."""
    if hasattr(request, "_body"):
        body: bytes = request.body
    else:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > limit:
            raise RequestTooLarge()
        body = request.read(limit + 1)
    if len(body) > limit:
        raise RequestTooLarge()
    return body


class MCPMiddleware:
    """Admit MCP requests before their view runs; record every MCP exchange."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        exchange: Exchange | None = getattr(request, "mcp_exchange", None)
        if exchange is not None and mcp_settings.REQUEST_LOG != "off":
            recorder.submit(exchange.record(request, response))
        return response

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponse | None:
        site: MCPSite | None = getattr(view_func, "mcp_site", None)
        if site is None:
            return None
        exchange = Exchange(site)
        request.mcp_exchange = exchange  # type: ignore[attr-defined]
        if request.method != "POST":
            return method_not_allowed()
        origin = request.headers.get("Origin")
        if origin is not None and not origin_allowed(origin, mcp_settings.ALLOWED_ORIGINS):
            return error_response(ForbiddenOrigin(), None)
        request.get_host()  # enforces ALLOWED_HOSTS (DNS rebinding) even without Common
        try:
            body = read_body(request, int(mcp_settings.MAX_REQUEST_BYTES))
        except RequestTooLarge as exc:
            return error_response(exc, None)
        admission = site.server.admit(body, normalise(request.headers), request=request)
        exchange.admission = admission
        request.mcp_admission = admission  # type: ignore[attr-defined]
        return admission_response(admission)
