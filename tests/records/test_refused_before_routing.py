"""An MCP request the project's own middleware refuses before ``MCPMiddleware.process_view``
runs is still recorded, when ``MCPMiddleware`` wraps the middleware that refused it
(docs/guides/records.md, "Refused before django-mcp saw them").

The case that matters is DNS rebinding (basic/transports/streamable-http.mdx, "Security
Warning": servers must validate ``Host``): ``CommonMiddleware`` answers a ``Host`` outside
``ALLOWED_HOSTS`` with a 400 before Django resolves the URL, so the view's middleware hook
never runs. Without :func:`~django_mcp.http.unrouted.open_unrouted_exchange` that hostile
request left no row, while the native paths record it. Through the Django test client, with
the test project's middleware stack.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.test import Client
from django.urls import path
from django.utils import timezone

from django_mcp.http import unrouted
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.sites import MCPSite
from tests import urls as test_urls
from tests.helpers import mcp_post

pytestmark = pytest.mark.django_db


class RefuseInProcessView:
    """A middleware listed before ``MCPMiddleware`` that refuses every view (as a project's
    own IP block list or rate limiter might), as :data:`REFUSAL` says."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, *args: Any) -> HttpResponseBase:
        REFUSAL["refusing_at"] = timezone.now()
        time.sleep(REFUSAL["seconds"])
        return HttpResponse(REFUSAL["body"], status=403, content_type=REFUSAL["type"])


#: ``refusing_at``: when the last refusal began (before its pause), set by the middleware.
REFUSAL: dict[str, Any] = {"seconds": 0.0, "body": "blocked", "type": "text/plain"}


def refuse_before_mcp(settings: Any) -> None:
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE[:-1],
        f"{__name__}.RefuseInProcessView",
        "django_mcp.middleware.MCPMiddleware",
    ]


def plain_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse("not MCP")


@pytest.fixture
def validate_exchange() -> Callable[[HttpResponse, Any], None]:
    """The answers here are the project's middleware's (Django's 400 page, a plain 403),
    not django-mcp's: they are recorded, not held to the MCP response shapes."""
    return lambda response, info: None


def mcp_first(settings: Any) -> None:
    """``MCPMiddleware`` first in ``MIDDLEWARE``, so that it wraps ``CommonMiddleware``."""
    mcp = "django_mcp.middleware.MCPMiddleware"
    settings.MIDDLEWARE = [mcp, *(name for name in settings.MIDDLEWARE if name != mcp)]


@pytest.fixture
def site(mcp_site: MCPSite, settings: Any) -> MCPSite:
    @mcp_site.tool()
    def hello() -> str:
        """Open to everyone."""
        return "hello"

    test_urls.urlpatterns.append(path("plain", plain_view))
    settings.ALLOWED_HOSTS = ["testserver"]
    return mcp_site


def rows() -> list[tuple[Any, ...]]:
    recorder.flush()
    return list(
        RequestLog.objects.values_list("site", "http_status", "method", "error_code", "remote_addr")
    )


def test_a_host_outside_allowed_hosts_is_recorded(site: MCPSite, settings: Any) -> None:
    mcp_first(settings)

    response = mcp_post(
        Client(raise_request_exception=False),
        "tools/call",
        {"name": "hello"},
        HTTP_HOST="evil.example",
        REMOTE_ADDR="203.0.113.9",
    )

    assert response.status_code == 400
    assert rows() == [("test", 400, "", None, "203.0.113.9")]


def test_a_refusal_by_an_earlier_middleware_is_recorded(site: MCPSite, settings: Any) -> None:
    refuse_before_mcp(settings)

    response = mcp_post(Client(raise_request_exception=False), "tools/call", {"name": "hello"})

    assert response.status_code == 403
    assert rows() == [("test", 403, "", None, "127.0.0.1")]


def test_other_urls_are_not_recorded(site: MCPSite, settings: Any) -> None:
    """Neither a refused ``Host`` on another URL, nor a URL nothing matches, nor another
    view's refusal: the log holds MCP exchanges only."""
    mcp_first(settings)
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, f"{__name__}.RefuseInProcessView"]
    client = Client(raise_request_exception=False)
    assert client.post("/plain", HTTP_HOST="evil.example").status_code == 400
    assert client.post("/nowhere").status_code == 404
    assert client.post("/plain").status_code == 403

    assert rows() == []


def test_a_404_is_not_resolved_a_second_time(
    site: MCPSite, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing matched, so nothing is an MCP URL: no second walk of the URLconf for every
    request a scanner sends to a URL that does not exist."""
    mcp_first(settings)
    resolved: list[str] = []
    real = unrouted._resolved
    monkeypatch.setattr(
        unrouted, "_resolved", lambda request: resolved.append(request.path) or real(request)
    )

    assert Client(raise_request_exception=False).post("/nowhere").status_code == 404
    assert (
        Client(raise_request_exception=False).post("/plain", HTTP_HOST="evil.example").status_code
        == 400
    )

    assert resolved == ["/plain"]


def test_the_row_spans_the_request_not_just_the_response(
    site: MCPSite, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exchange is opened after the response; its time and duration are still the
    request's (else every such row would say 0 ms and skew the summaries).

    The start is bounded by when the refusing middleware began its 50 ms pause, not by a
    fixed margin after ``before``: the test client and the middleware stack may take
    more than that margin to reach it on a loaded machine. (The stamp is derived from a
    ``perf_counter`` reading, so 5 ms absorb the two clocks' drift; an answer stamped at
    the response would be 50 ms late.)"""
    refuse_before_mcp(settings)
    monkeypatch.setitem(REFUSAL, "seconds", 0.05)
    before = timezone.now()

    mcp_post(Client(raise_request_exception=False), "tools/call", {"name": "hello"})

    recorder.flush()
    row = RequestLog.objects.get()
    assert row.duration_ms >= 50
    drift = datetime.timedelta(milliseconds=5)
    assert before <= row.started_at <= REFUSAL["refusing_at"] + drift


def test_another_middleware_s_json_is_not_read_as_a_json_rpc_error(
    site: MCPSite, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rate limiter's own JSON (its code an HTTP status) is not django-mcp's answer."""
    refuse_before_mcp(settings)
    body = json.dumps({"error": {"code": 429, "message": "slow down"}})
    monkeypatch.setitem(REFUSAL, "body", body)
    monkeypatch.setitem(REFUSAL, "type", "application/json")

    mcp_post(Client(raise_request_exception=False), "tools/call", {"name": "hello"})

    assert rows() == [("test", 403, "", None, "127.0.0.1")]
    assert RequestLog.objects.get().error_message == ""


def test_recording_a_refusal_never_touches_the_session_it_shielded(
    site: MCPSite, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusing middleware never read ``request.user``; recording the refusal must not
    either: with the session store down that would turn the 403 into a 500."""
    refuse_before_mcp(settings)

    def down(self: Any) -> Any:
        raise ConnectionError("session store unreachable")

    monkeypatch.setattr(SessionStore, "load", down)
    client = Client(raise_request_exception=False)
    client.cookies["sessionid"] = "a" * 32

    response = mcp_post(client, "tools/call", {"name": "hello"})

    assert response.status_code == 403
    recorder.flush()
    assert RequestLog.objects.get().user_id is None


class AnswerAfterAdmission:
    """A middleware listed after ``MCPMiddleware`` (a maintenance switch, say) that answers
    an admitted request with JSON of its own, shaped like a JSON-RPC error."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, *args: Any) -> HttpResponseBase:
        body = {"error": {"code": 503, "message": "Down for maintenance"}}
        return HttpResponse(json.dumps(body), status=503, content_type="application/json")


def test_an_answer_of_the_project_after_admission_keeps_no_error_code(
    site: MCPSite, settings: Any
) -> None:
    """The answer was the project's, not django-mcp's: its body is not read as a JSON-RPC
    error (docs/guides/records.md), even when it looks like one. The request was admitted,
    so its method is known; only django-mcp's own refusals carry a code."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, f"{__name__}.AnswerAfterAdmission"]

    response = mcp_post(Client(), "tools/call", {"name": "hello"})

    assert response.status_code == 503
    assert rows() == [(site.name, 503, "tools/call", None, "127.0.0.1")]
