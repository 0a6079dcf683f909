"""A route per tenant whose converter reads state, for the tests of what is remembered of a
path's route (``django_mcp.http.stack`` and ``django_mcp.http.routes``): a path served while
its tenant is open must not be served once it closes (Django then answers 404).

Importing this module registers the converter as ``routestenant`` (once: Django 6 refuses a
second registration)."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import register_converter
from django.views.decorators.csrf import csrf_exempt

from django_mcp.http.views import MCPView

#: The tenants whose path resolves; a test closes one by discarding it (and reopens it).
OPEN_TENANTS = {"acme"}


class TenantConverter:
    """A converter that reads state: a closed tenant's path does not resolve."""

    regex = "[a-z]+"

    def to_python(self, value: str) -> str:
        if value not in OPEN_TENANTS:
            raise ValueError(value)
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(TenantConverter, "routestenant")


class TenantView(MCPView):
    """An endpoint per tenant (the tenant is not used: the route is what is tested)."""

    def post(self, request: HttpRequest, tenant: str = "") -> HttpResponseBase:  # type: ignore[override]
        return super().post(request)


class TenantNotingView(MCPView):
    """A per-tenant endpoint as a project writes one: the route's value is noted on the
    request for the tools (so Django must pass it to ``post``, and every path must call
    ``post``)."""

    def post(self, request: HttpRequest, tenant: str) -> HttpResponseBase:  # type: ignore[override]
        request.tenant = tenant  # type: ignore[attr-defined]
        return super().post(request)


@csrf_exempt
def tenant_page(request: HttpRequest, tenant: str) -> HttpResponse:
    """A page per tenant that is no MCP endpoint (its 418 tells it apart), which reads
    the whole body it was sent: the method of the JSON-RPC message it holds."""
    return HttpResponse(json.loads(request.body)["method"], status=418)
