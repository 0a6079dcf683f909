"""``MCPMiddleware`` serving a path Django has routed to an MCP view without Django's URL
resolution, only where nothing else would run around the view (``django_mcp.http.stack``).

Each test goes through Django's real handler (the test client), as a WSGI server does. The
endpoint's answers are the protocol's (basic/transports/streamable-http.mdx, "Sending
Messages": each POST is answered on its own): whichever way a request reaches the view, it
must get the same answer, record and ``resolver_match``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from asgiref.sync import sync_to_async
from django.conf.urls.i18n import i18n_patterns
from django.db import connection, connections, transaction
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from django.test import Client
from django.urls import (
    ResolverMatch,
    URLResolver,
    clear_url_caches,
    path,
    re_path,
    resolve,
)
from django.utils import translation

from django_mcp.http.middleware import MCPMiddleware
from django_mcp.http.stack import ROUTES_LEARNT, LearntRoutes, shortcut_allowed
from django_mcp.http.views import MCPView
from django_mcp.models import RequestLog
from django_mcp.requestlog import recorder
from tests import urls as test_urls
from tests.helpers import assert_error, call_tool, result_of
from tests.http.tenants import OPEN_TENANTS, TenantView, tenant_page

pytestmark = pytest.mark.django_db

MCP = "django_mcp.middleware.MCPMiddleware"
PROJECT_STACK = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    MCP,
]

#: Every process_view call a hook below saw: (middleware, path).
SEEN: list[tuple[str, str]] = []


class NoHooks:
    """A middleware with no hook at all."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)


class ViewHook(NoHooks):
    """A middleware with a ``process_view`` of its own (a permission check, a toolbar)."""

    def process_view(self, request: HttpRequest, *args: Any) -> None:
        SEEN.append(("view", request.path))


class ExceptionHook(NoHooks):
    """A middleware with ``process_exception`` (an error reporter)."""

    def process_exception(self, request: HttpRequest, exception: Exception) -> None:
        SEEN.append(("exception", request.path))


class KeptCsrf(NoHooks):
    """A ``CsrfViewMiddleware`` subclass that keeps its ``process_view``."""

    process_view = CsrfViewMiddleware.process_view  # type: ignore[assignment]


class OverriddenCsrf(CsrfViewMiddleware):
    """A ``CsrfViewMiddleware`` whose ``process_view`` may do anything."""

    def process_view(self, request: HttpRequest, *args: Any) -> None:  # type: ignore[override]
        SEEN.append(("csrf", request.path))


class SetsUrlconf(NoHooks):
    """A middleware that routes by host (django-hosts does this): ``request.urlconf``."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.headers.get("X-Other-Urlconf"):
            request.urlconf = "tests.http.test_learnt_routes"
        return self.get_response(request)


class AddsHeader(NoHooks):
    """A middleware with no hook, listed after MCPMiddleware: it wraps the view."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response["X-Wrapped"] = "yes"
        return response


class Unlearning(MCPMiddleware):
    learns_routes = False


class TemplateHook(NoHooks):
    """A middleware with ``process_template_response`` (it sees a browser's page)."""

    def process_template_response(self, request: HttpRequest, response: Any) -> Any:
        response["X-Template-Hook"] = "ran"
        return response


class LanguageFromHeader(NoHooks):
    """Activates the language a header names, for the request (as LocaleMiddleware does
    from a cookie or Accept-Language)."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        translation.activate(request.headers.get("X-Language", "en-us"))
        try:
            return self.get_response(request)
        finally:
            translation.deactivate()


class AsyncPost(MCPView):
    async def post(self, request: HttpRequest) -> Any:  # type: ignore[override]
        return await sync_to_async(MCPView.post)(self, request)


def _not_mcp(request: HttpRequest) -> HttpResponse:
    return HttpResponse("not mcp", content_type="text/plain")


#: The URLconf SetsUrlconf routes to: the same path, another view.
urlpatterns = [path("mcp", _not_mcp)]


@pytest.fixture
def site(mcp_site):
    @mcp_site.tool
    def add(a: int, b: int) -> int:
        return a + b

    return mcp_site


@pytest.fixture
def resolutions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths Django's root resolver resolved, one entry per resolution."""
    seen: list[str] = []
    original = URLResolver.resolve

    def counting(self: URLResolver, path: str) -> Any:
        if self.pattern.regex.pattern == "^/":
            seen.append(path)
        return original(self, path)

    monkeypatch.setattr(URLResolver, "resolve", counting)
    return seen


def _stack(*extra: str, last: str = MCP) -> list[str]:
    return [*PROJECT_STACK[:-1], *extra, last]


def test_the_project_stack_allows_the_shortcut() -> None:
    assert shortcut_allowed(PROJECT_STACK, MCPMiddleware)
    assert shortcut_allowed(_stack(f"{__name__}.KeptCsrf"), MCPMiddleware)


@pytest.mark.parametrize(
    "stack",
    [
        pytest.param([*PROJECT_STACK, "django.middleware.gzip.GZipMiddleware"], id="not-last"),
        pytest.param(_stack(f"{__name__}.ViewHook"), id="process_view"),
        pytest.param(_stack(f"{__name__}.OverriddenCsrf"), id="csrf-overridden"),
        pytest.param(_stack(f"{__name__}.ExceptionHook"), id="process_exception"),
        pytest.param(_stack(f"{__name__}.TemplateHook"), id="process_template_response"),
        pytest.param(_stack("django.contrib.admindocs.middleware.XViewMiddleware"), id="xview"),
        pytest.param(_stack(f"{__name__}._not_mcp"), id="a-factory-function"),
        pytest.param(_stack("no.such.Middleware"), id="unimportable"),
        pytest.param([], id="empty"),
    ],
)
def test_a_stack_that_may_act_around_the_view_refuses_the_shortcut(stack: list[str]) -> None:
    assert not shortcut_allowed(stack, MCPMiddleware)


def test_a_second_request_is_served_without_resolution(site, resolutions, settings) -> None:
    settings.MIDDLEWARE = PROJECT_STACK
    client = Client()
    first, second, third = (call_tool(client, "add", {"a": 1, "b": 2}) for _ in range(3))
    assert resolutions == ["/mcp", "/mcp"]  # Django's, then once more as it is learnt
    assert result_of(first) == result_of(second) == result_of(third)
    assert second.headers.items() == first.headers.items()
    # What Django sets and a tool may read: the match of the endpoint, each request's own
    # (what one request does to it never reaches the next).
    served = [response.wsgi_request.resolver_match for response in (second, third)]
    assert all(isinstance(match, ResolverMatch) for match in served)
    assert [match.url_name for match in served] == ["endpoint", "endpoint"]
    assert served[0] is not served[1]
    assert served[0].kwargs is not served[1].kwargs
    recorder.flush()
    rows = RequestLog.objects.order_by("id").values_list("method", "target", "outcome")
    assert list(rows) == [("tools/call", "add", "ok")] * 3


def test_other_paths_are_resolved_by_django_every_time(site, resolutions, settings) -> None:
    settings.MIDDLEWARE = PROJECT_STACK
    test_urls.urlpatterns.append(path("plain", _not_mcp))
    client = Client()
    for _ in range(2):
        assert client.get("/plain").content == b"not mcp"
    assert resolutions == ["/plain", "/plain"]


def test_a_view_hook_runs_on_every_request(site, resolutions, settings) -> None:
    """A middleware's process_view would be skipped by the shortcut, so there is none."""
    settings.MIDDLEWARE = _stack(f"{__name__}.ViewHook")
    SEEN.clear()
    client = Client()
    for _ in range(3):
        result_of(call_tool(client, "add", {"a": 1, "b": 2}))
    assert SEEN == [("view", "/mcp")] * 3
    assert resolutions == ["/mcp"] * 3


def test_a_middleware_after_mcp_wraps_every_request(site, resolutions, settings) -> None:
    settings.MIDDLEWARE = [*PROJECT_STACK, f"{__name__}.AddsHeader"]
    client = Client()
    for _ in range(2):
        assert call_tool(client, "add", {"a": 1, "b": 2}).headers["X-Wrapped"] == "yes"
    assert resolutions == ["/mcp", "/mcp"]


def test_a_request_with_its_own_urlconf_is_routed_by_it(site, settings) -> None:
    settings.MIDDLEWARE = [f"{__name__}.SetsUrlconf", *PROJECT_STACK]
    assert shortcut_allowed(settings.MIDDLEWARE, MCPMiddleware)
    client = Client()
    result_of(call_tool(client, "add", {"a": 1, "b": 2}))
    other = call_tool(client, "add", {"a": 1, "b": 2}, headers={"X-Other-Urlconf": "1"})
    assert other.content == b"not mcp"


def test_a_new_urlconf_forgets_the_learnt_paths(site, settings) -> None:
    settings.MIDDLEWARE = PROJECT_STACK
    client = Client()
    result_of(call_tool(client, "add", {"a": 1, "b": 2}))
    settings.ROOT_URLCONF = __name__  # /mcp is now a plain view
    assert call_tool(client, "add", {"a": 1, "b": 2}).content == b"not mcp"


def test_a_failing_view_is_answered_alike_both_ways(site, settings) -> None:
    """An exception out of the view reaches process_exception on both paths: a JSON-RPC
    internal error with the request's id, recorded (basic/index.mdx "Error Responses")."""
    settings.MIDDLEWARE = PROJECT_STACK
    client = Client(raise_request_exception=False)
    result_of(call_tool(client, "add", {"a": 1, "b": 2}))  # learnt
    with mock.patch.object(MCPView, "post", side_effect=RuntimeError("boom")):
        answers = [call_tool(client, "add", {"a": 1, "b": 2}) for _ in range(2)]
    for answer in answers:
        assert_error(answer, 200, -32603)
    assert answers[0].json() == answers[1].json()
    recorder.flush()
    assert list(RequestLog.objects.order_by("id").values_list("outcome", "error_code")) == [
        ("ok", None),
        ("protocol_error", -32603),
        ("protocol_error", -32603),
    ]


def test_learning_starts_again_at_its_bound(site, rf) -> None:
    """A loose pattern lets any client name a new path: the table stays bounded."""
    test_urls.urlpatterns[:] = [re_path(r"^mcp", MCPView.as_view(site=site))]
    routes = LearntRoutes()
    for number in range(ROUTES_LEARNT + 6):
        request = rf.post(f"/mcp{number}")
        request.resolver_match = resolve(f"/mcp{number}")
        routes.learn(request)
    assert len(routes.table) == 6
    assert routes.match(rf.post(f"/mcp{ROUTES_LEARNT + 5}")) is not None
    assert routes.match(rf.post("/mcp0")) is None


def test_a_subclass_may_turn_learning_off(site, resolutions, settings) -> None:
    settings.MIDDLEWARE = [*PROJECT_STACK[:-1], f"{__name__}.Unlearning"]
    client = Client()
    for _ in range(2):
        result_of(call_tool(client, "add", {"a": 1, "b": 2}))
    assert resolutions == ["/mcp", "/mcp"]


def test_only_a_post_takes_the_shortcut(site, settings, resolutions) -> None:
    """A browser's GET (a TemplateResponse page) is resolved by Django every time."""
    settings.MIDDLEWARE = PROJECT_STACK
    client = Client()
    result_of(call_tool(client, "add", {"a": 1, "b": 2}))
    resolutions.clear()
    for _ in range(2):
        page = client.get("/mcp", HTTP_ACCEPT="text/html")
        assert page.status_code == 200
    assert resolutions == ["/mcp", "/mcp"]


def test_a_template_hook_runs_on_every_page(site, settings) -> None:
    """A stack with ``process_template_response`` takes no shortcut (an ``MCPView``
    subclass may answer a POST with a template response): its hook runs on a page."""
    settings.MIDDLEWARE = [*PROJECT_STACK[:-1], f"{__name__}.TemplateHook", MCP]
    client = Client()
    result_of(call_tool(client, "add", {"a": 1, "b": 2}))
    for _ in range(2):
        page = client.get("/mcp", HTTP_ACCEPT="text/html")
        assert page.status_code == 200
        assert page["X-Template-Hook"] == "ran"


def test_an_async_view_is_never_learnt(site, settings) -> None:
    settings.MIDDLEWARE = PROJECT_STACK
    test_urls.urlpatterns[:] = [path("mcp", AsyncPost.as_view(site=site))]
    client = Client()
    for _ in range(2):
        assert result_of(call_tool(client, "add", {"a": 1, "b": 2}))["structuredContent"] == 3


def test_a_route_with_a_converter_is_resolved_every_time(site, settings) -> None:
    """A converter may answer differently next time (a tenant closed): Django's 404."""
    settings.MIDDLEWARE = PROJECT_STACK
    test_urls.urlpatterns[:] = [path("<routestenant:tenant>/mcp", TenantView.as_view(site=site))]
    client = Client()
    result_of(call_tool(client, "add", {"a": 1, "b": 2}, path="/acme/mcp"))
    OPEN_TENANTS.discard("acme")
    try:
        assert call_tool(client, "add", {"a": 1, "b": 2}, path="/acme/mcp").status_code == 404
    finally:
        OPEN_TENANTS.add("acme")


def test_a_route_of_the_projects_own_on_another_path_leaves_the_endpoint_learnt(
    site, resolutions, settings
) -> None:
    """A route with a converter of the project's own before the endpoint, whose regular
    expression never matches ``/mcp``, never asked its converter: ``/mcp`` is learnt."""
    settings.MIDDLEWARE = PROJECT_STACK
    test_urls.urlpatterns.insert(0, path("shop/<routestenant:tenant>/", tenant_page))
    clear_url_caches()
    client = Client()
    for _ in range(3):
        result_of(call_tool(client, "add", {"a": 1, "b": 2}))
    assert resolutions == ["/mcp", "/mcp"]  # Django's, then once more as it is learnt


def test_a_route_per_language_is_learnt_per_language(site, settings) -> None:
    settings.MIDDLEWARE = [f"{__name__}.LanguageFromHeader", *PROJECT_STACK]
    test_urls.urlpatterns[:] = i18n_patterns(path("mcp", site.urls), prefix_default_language=False)
    clear_url_caches()
    client = Client()
    result_of(call_tool(client, "add", {"a": 1, "b": 2}))
    french = call_tool(client, "add", {"a": 1, "b": 2}, headers={"X-Language": "fr"})
    assert french.status_code == 404  # /mcp is /fr/mcp in French


def test_a_urlconf_changed_during_the_request_is_not_learnt(site, settings) -> None:
    """Another thread reloading the URLconf while a request runs (modelled by the tool)."""
    settings.MIDDLEWARE = PROJECT_STACK

    @site.tool
    def reload() -> bool:
        test_urls.urlpatterns[:] = [path("mcp", _not_mcp)]
        clear_url_caches()
        return True

    client = Client()
    result_of(call_tool(client, "reload"))
    assert call_tool(client, "add", {"a": 1, "b": 2}).content == b"not mcp"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("exempt", "depth"), [(False, 2), (True, 0)])
def test_atomic_requests_wrap_the_view_as_in_django(
    site, settings, monkeypatch, exempt: bool, depth: int
) -> None:
    """ATOMIC_REQUESTS on the shortcut too: the tool runs in the view's savepoint inside
    the view's transaction, two atomic blocks deep; a view exempt from it
    (``non_atomic_requests``) gets neither."""
    settings.MIDDLEWARE = PROJECT_STACK
    monkeypatch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", True)
    view = MCPView.as_view(site=site)
    test_urls.urlpatterns[:] = [
        path("mcp", transaction.non_atomic_requests(view) if exempt else view)
    ]
    depths: list[int] = []

    @site.tool
    def in_transaction() -> bool:
        depths.append(len(connection.atomic_blocks))
        return True

    client = Client()
    for _ in range(2):
        result_of(call_tool(client, "in_transaction"))
    assert depths == [depth, depth]
