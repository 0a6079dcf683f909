"""The native paths call an MCP view as Django's handler calls it: with the values its
route captured, and always the view a project wrote (a subclass's own steps, a decorator's
wrapper), except where nothing but ``MCPView``'s own steps would run.

Each test runs through the four ways a project serves MCP (tests/http/four_paths.py) and
expects the same of all four (basic/transports/streamable-http.mdx, "Sending Messages to
the Server"; server/tools.mdx for the ``tools/call`` results).
"""

from __future__ import annotations

import functools
from typing import Any

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.http import HttpRequest, HttpResponseBase
from django.template import engines
from django.template.response import SimpleTemplateResponse
from django.urls import clear_url_caches, include, path
from django.views.decorators.cache import never_cache

from django_mcp.http.views import MCPView
from django_mcp.server.context import Context
from django_mcp.sites import MCPSite
from tests import urls as test_urls
from tests.helpers import override_mcp
from tests.http.four_paths import APPS, Send, sender, text_of
from tests.http.native_support import call
from tests.http.tenants import TenantNotingView

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("keep_the_test_database_connection")]


@pytest.fixture
def site(mcp_site: MCPSite) -> MCPSite:
    @mcp_site.tool
    def tenant_of(ctx: Context) -> str:
        return str(getattr(ctx.request, "tenant", "none"))

    @mcp_site.tool
    async def async_tenant_of(ctx: Context) -> str:
        return str(getattr(ctx.request, "tenant", "none"))

    return mcp_site


@pytest.fixture(params=sorted(APPS))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def send(kind: str, site: MCPSite) -> Send:
    return sender(kind)


def assert_failure_answered(response: httpx.Response, kind: str) -> None:
    """A failure Django's handler answers with its HTML 500 (outside ``process_exception``),
    which the native paths answer as they answer every failure of the view: the admitted
    request's JSON-RPC internal error (-32603 with HTTP 200; docs/deployment.md)."""
    if kind.endswith("native"):
        assert response.status_code == 200, response.text
        assert response.json()["error"]["code"] == -32603
    else:
        assert response.status_code == 500


class PostNotingView(MCPView):
    """Its own ``post`` (no route values): notes a tenant for the tools."""

    def post(self, request: HttpRequest) -> HttpResponseBase:
        request.tenant = "acme"  # type: ignore[attr-defined]
        return super().post(request)


class SetupNotingView(MCPView):
    """Its own ``setup``, which notes a tenant (from the host, say)."""

    def setup(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        super().setup(request, *args, **kwargs)
        request.tenant = "acme"  # type: ignore[attr-defined]


class AsyncPostNotingView(MCPView):
    """An ``async def post`` taking the route's value: Django awaits it."""

    async def post(self, request: HttpRequest, tenant: str) -> HttpResponseBase:  # type: ignore[override]
        request.tenant = tenant  # type: ignore[attr-defined]
        response: HttpResponseBase = await sync_to_async(MCPView.post)(self, request)
        return response


class InitRefusingPost(MCPView):
    """Its own ``__init__``, which takes POST off the instance's method names."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.http_method_names = ["get"]


class TemplatePost(MCPView):
    """A ``post`` that answers with a template response, which Django renders."""

    def post(self, request: HttpRequest) -> HttpResponseBase:
        template = engines["django"].from_string("rendered for {{ who }}")
        return SimpleTemplateResponse(template, {"who": "the client"})


class NoneRenderResponse(SimpleTemplateResponse):
    """A template response whose ``render`` answers nothing."""

    def render(self) -> Any:  # type: ignore[override]
        return None


class RenderingPost(MCPView):
    """A ``post`` answering a template response: of ``template``, rendered in sync
    (``rendered="sync"``), awaited (``"async"``) or to nothing (None)."""

    template = "rendered for {{ who }}"
    rendered: str | None = "sync"

    def post(self, request: HttpRequest) -> HttpResponseBase:
        if self.rendered == "async":
            return AsyncRenderResponse(engines["django"].from_string(self.template), {"who": "it"})
        if self.rendered is None:
            return NoneRenderResponse(engines["django"].from_string(self.template), {})
        return SimpleTemplateResponse(engines["django"].from_string(self.template), {"who": "it"})


class AsyncRenderResponse(SimpleTemplateResponse):
    """A template response whose ``render`` is a coroutine function (Django's ASGI
    handler awaits it)."""

    async def render(self) -> Any:  # type: ignore[override]
        return super().render()


class NonePost(MCPView):
    """A ``post`` that returns nothing: Django refuses it (``check_response``)."""

    def post(self, request: HttpRequest) -> Any:  # type: ignore[override]
        return None


class NoneRender(MCPView):
    """A ``render`` that returns nothing, so ``post`` does too."""

    def render(self, reply: Any) -> Any:
        return None


def noting_tenant(view: Any) -> Any:
    """A project's decorator: its wrapper (``functools.wraps`` copies the view's
    attributes onto it) notes a tenant, then calls the view."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        request.tenant = "acme"  # type: ignore[attr-defined]
        return view(request, *args, **kwargs)

    return wrapper


@pytest.mark.parametrize("layout", ["route", "include"])
@pytest.mark.parametrize("tool", ["tenant_of", "async_tenant_of"])
@pytest.mark.parametrize("limited", [False, True], ids=["", "rate-limited"])
def test_the_view_gets_the_route_s_values(
    send: Send, site: MCPSite, layout: str, tool: str, limited: bool
) -> None:
    """The view is called with the values its route captured, and it runs (an ``async
    def`` tool too, which the native ASGI path may otherwise serve without the view): a
    subclass's ``post`` sees its tenant. With a rate limit, the native ASGI path admits
    the request in the view's worker thread."""
    view = TenantNotingView.as_view(site=site)
    if layout == "route":
        test_urls.urlpatterns[:] = [path("<routestenant:tenant>/mcp", view)]
    else:
        test_urls.urlpatterns[:] = [path("<routestenant:tenant>/", include([path("mcp", view)]))]
    clear_url_caches()
    with override_mcp(RATE_LIMIT_IP="1000/m" if limited else None):
        assert text_of(send("/acme/mcp", call(tool))) == "acme"


@pytest.mark.parametrize("tool", ["tenant_of", "async_tenant_of"])
@pytest.mark.parametrize("steps", ["post", "setup", "decorator"])
def test_a_view_with_steps_of_its_own_runs_them(
    send: Send, site: MCPSite, tool: str, steps: str
) -> None:
    """A subclass's ``post`` or ``setup``, or a decorator's wrapper, runs before the tool
    on every path, an ``async def`` tool's call included."""
    view = {
        "post": lambda: PostNotingView.as_view(site=site),
        "setup": lambda: SetupNotingView.as_view(site=site),
        "decorator": lambda: noting_tenant(MCPView.as_view(site=site)),
    }[steps]()
    test_urls.urlpatterns[:] = [path("mcp", view)]
    clear_url_caches()
    assert text_of(send("/mcp", call(tool))) == "acme"


def test_a_decorator_s_headers_are_sent(send: Send, site: MCPSite) -> None:
    """Django's ``never_cache`` around the view: its ``Cache-Control`` on every path."""
    test_urls.urlpatterns[:] = [path("mcp", never_cache(MCPView.as_view(site=site)))]
    clear_url_caches()
    response = send("/mcp", call("async_tenant_of"))
    assert text_of(response) == "none"
    assert "no-cache" in response.headers["cache-control"]


class GetOnlyView(MCPView):
    """A subclass that takes no POST (only its ``http_method_names`` say so)."""

    http_method_names = ["get"]  # noqa: RUF012 - as Django's View declares it


@pytest.mark.parametrize("where", ["initkwargs", "subclass", "__init__"])
def test_method_names_that_refuse_post_are_heeded(send: Send, site: MCPSite, where: str) -> None:
    """``http_method_names`` without ``post``, given to ``as_view``, set by a subclass or
    by its ``__init__``: 405 on every path."""
    if where == "initkwargs":
        view = MCPView.as_view(site=site, http_method_names=["get"])
    elif where == "subclass":
        view = GetOnlyView.as_view(site=site)
    else:
        view = InitRefusingPost.as_view(site=site)
    test_urls.urlpatterns[:] = [path("mcp", view)]
    clear_url_caches()
    assert send("/mcp", call("async_tenant_of")).status_code == 405


def test_an_async_post_runs_to_its_end(send: Send, site: MCPSite) -> None:
    """A subclass's ``async def post`` is awaited, with the route's value, as Django's
    handler awaits an async view."""
    view = AsyncPostNotingView.as_view(site=site)
    test_urls.urlpatterns[:] = [path("<routestenant:tenant>/mcp", view)]
    clear_url_caches()
    assert text_of(send("/acme/mcp", call("tenant_of"))) == "acme"


def test_a_template_response_is_rendered(send: Send, site: MCPSite) -> None:
    """A subclass's template response is rendered, as Django renders it, on every path
    and on every request (the second takes MCPMiddleware's learnt route under WSGI)."""
    test_urls.urlpatterns[:] = [path("mcp", TemplatePost.as_view(site=site))]
    clear_url_caches()
    for _ in range(2):
        response = send("/mcp", call("tenant_of"))
        assert (response.status_code, response.text) == (200, "rendered for the client")


@pytest.mark.django_db(transaction=True)
def test_an_async_view_in_atomic_requests_is_refused(
    send: Send, site: MCPSite, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Django refuses ``ATOMIC_REQUESTS`` for an async view (``RuntimeError``) before it
    runs: its 500 page on its paths, the failure's JSON-RPC answer on the native ones;
    never the view run outside the transaction the project asked for."""
    monkeypatch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", True)
    test_urls.urlpatterns[:] = [
        path("<routestenant:tenant>/mcp", AsyncPostNotingView.as_view(site=site))
    ]
    clear_url_caches()
    response = send("/acme/mcp", call("tenant_of"))
    assert_failure_answered(response, kind)


def test_a_template_that_fails_to_render_is_answered_alike(send: Send, site: MCPSite) -> None:
    """A rendering that raises (a ``{% url %}`` to no route) is offered to the view's
    ``process_exception`` as Django offers it, on every path and request: the admitted
    request's -32603 (HTTP 200), the second request too (MCPMiddleware's learnt route)."""
    view = RenderingPost.as_view(site=site, template="{% url 'no-such-route' %}")
    test_urls.urlpatterns[:] = [path("mcp", view)]
    clear_url_caches()
    for _ in range(2):
        response = send("/mcp", call("tenant_of"))
        assert response.status_code == 200, response.text
        assert response.json()["error"]["code"] == -32603


def test_an_async_render_is_awaited(send: Send, site: MCPSite, kind: str) -> None:
    """A template response whose ``render`` is a coroutine function is awaited, as
    Django's ASGI handler awaits it (its WSGI handler does not: not compared there)."""
    if kind == "wsgi django":
        pytest.skip("Django's WSGI handler calls render() without awaiting it")
    view = RenderingPost.as_view(site=site, rendered="async")
    test_urls.urlpatterns[:] = [path("mcp", view)]
    clear_url_caches()
    response = send("/mcp", call("tenant_of"))
    assert (response.status_code, response.text) == (200, "rendered for it")


def test_a_rendering_that_is_no_response_is_a_failure_answered(
    send: Send, site: MCPSite, kind: str
) -> None:
    """A ``render()`` that returns None: Django's 500 on its paths, the failure's
    JSON-RPC answer on the native ones, never an exception out of the application."""
    view = RenderingPost.as_view(site=site, rendered=None)
    test_urls.urlpatterns[:] = [path("mcp", view)]
    clear_url_caches()
    response = send("/mcp", call("tenant_of"))
    assert_failure_answered(response, kind)


@pytest.mark.parametrize("view_class", [NonePost, NoneRender], ids=["post", "render"])
@pytest.mark.parametrize("tool", ["tenant_of", "async_tenant_of"])
def test_a_view_that_returns_nothing_is_a_failure_answered(
    send: Send, site: MCPSite, kind: str, view_class: type[MCPView], tool: str
) -> None:
    """Django refuses a view's None (``ValueError``), never an exception out of the
    application (which would leave the client unanswered and the exchange unrecorded):
    Django's own 500 page on its paths, and on the native ones a failure of the view as
    they answer every one, the admitted request's JSON-RPC internal error (-32603 with
    HTTP 200; docs/deployment.md, the native paths). An ``async def`` tool's call
    included, which a subclass's own ``render`` keeps off the event loop."""
    test_urls.urlpatterns[:] = [path("mcp", view_class.as_view(site=site))]
    clear_url_caches()
    response = send("/mcp", call(tool))
    assert_failure_answered(response, kind)


def test_a_plain_view_given_values_fails_alike(send: Send, site: MCPSite) -> None:
    """``MCPView.post`` takes no route values: a route that captures one fails on every
    path (Django's ``TypeError``, answered as the admitted request's JSON-RPC internal
    error: -32603 with HTTP 200), an ``async def`` tool's call included, which the native
    ASGI path must then not serve without the view."""
    test_urls.urlpatterns[:] = [path("<routestenant:tenant>/mcp", site.urls)]
    clear_url_caches()
    response = send("/acme/mcp", call("async_tenant_of"))
    assert response.status_code == 200, response.text
    assert response.json()["error"]["code"] == -32603
