"""The learnt-route shortcut (``django_mcp.http.stack``) where Django itself answers: a
CSRF refusal and a view that returns nothing get Django's own responses, the same on the
first request and the next (Django's HTML pages, not MCP's, so not schema-validated)."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpRequest
from django.test import Client
from django.urls import path

from django_mcp.http.views import MCPView
from django_mcp.models import RequestLog
from django_mcp.requestlog import recorder
from tests import urls as test_urls
from tests.helpers import call_tool
from tests.http.test_learnt_routes import PROJECT_STACK

pytestmark = pytest.mark.django_db


@pytest.fixture
def validate_exchange() -> Any:
    """Django's own HTML answers: nothing of MCP's shape to validate."""
    return lambda response, info: None


@pytest.fixture
def site(mcp_site):
    @mcp_site.tool
    def add(a: int, b: int) -> int:
        return a + b

    return mcp_site


class NonePost(MCPView):
    def post(self, request: HttpRequest) -> Any:  # type: ignore[override]
        return None


def test_a_route_that_is_not_csrf_exempt_is_never_learnt(site, settings) -> None:
    """CsrfViewMiddleware decides nothing only for an exempt view: a refused POST must
    not open the path to the next one."""
    settings.MIDDLEWARE = PROJECT_STACK
    view = MCPView.as_view(site=site)
    view.csrf_exempt = False
    test_urls.urlpatterns[:] = [path("mcp", view)]
    client = Client(enforce_csrf_checks=True)
    for _ in range(2):
        assert call_tool(client, "add", {"a": 1, "b": 2}).status_code == 403


def test_a_view_that_returns_nothing_fails_as_in_django(site, settings) -> None:
    """Django's ValueError, a 500 recorded each time (not a crash in the recording)."""
    settings.MIDDLEWARE = PROJECT_STACK
    test_urls.urlpatterns[:] = [path("mcp", NonePost.as_view(site=site))]
    client = Client(raise_request_exception=False)
    statuses = [call_tool(client, "add", {"a": 1, "b": 2}).status_code for _ in range(2)]
    assert statuses == [500, 500]
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", flat=True)) == [500, 500]
