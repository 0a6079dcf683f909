"""What the native paths remember of a path's route (``django_mcp.http.routes``) is what
Django would answer next time: per language, never for a path with captured values, and
never one ``resolver_match`` shared by two requests.

Each test runs through the four ways a project serves MCP (tests/http/four_paths.py) and
expects the same of all four (basic/transports/streamable-http.mdx, "Sending Messages to
the Server": a POST to the endpoint gets its JSON-RPC answer; a path that is not the
endpoint is Django's 404).
"""

from __future__ import annotations

import threading
from typing import Any

import httpx
import pytest
from django.conf.urls.i18n import i18n_patterns
from django.urls import (
    Resolver404,
    URLPattern,
    clear_url_caches,
    get_resolver,
    include,
    path,
    re_path,
    resolve,
)
from django.urls.resolvers import RoutePattern
from django.utils import translation

from django_mcp.http import routes
from django_mcp.http.views import MCPView
from django_mcp.server.context import Context
from django_mcp.sites import MCPSite
from tests import urls as test_urls
from tests.helpers import override_mcp
from tests.http.four_paths import APPS, Send, sender
from tests.http.native_support import call
from tests.http.own_routes import OwnPattern, OwnURLPattern
from tests.http.tenants import OPEN_TENANTS, TenantView, tenant_page

#: Only against a hang: a test waits this long at most for the other thread.
HANG_GUARD_SECONDS = 30
#: What ``ROOT_URLCONF`` becomes when a test changes it: nothing is routed.
urlpatterns: list[Any] = []

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("keep_the_test_database_connection")]


@pytest.fixture
def site(mcp_site: MCPSite) -> MCPSite:
    @mcp_site.tool
    def add(a: int, b: int) -> int:
        return a + b

    @mcp_site.tool
    def route_seen_before(ctx: Context) -> list[str]:
        """The marks an earlier request left on this request's ``resolver_match`` (an
        attribute, its lists, its keyword arguments), then marks it: code may change it,
        as Django lets it (each request has its own)."""
        assert ctx.request is not None
        match = ctx.request.resolver_match
        assert match is not None
        parts = {
            "attribute": hasattr(match, "marked_by_a_tool"),
            "namespaces": "marked" in match.namespaces,
            "app_names": "marked" in match.app_names,
            "kwargs": "marked" in match.kwargs,
            "captured_kwargs": "marked" in match.captured_kwargs,  # type: ignore[attr-defined]
            "extra_kwargs": "marked" in match.extra_kwargs,  # type: ignore[attr-defined]
            "tried": "marked" in match.tried,
        }
        match.marked_by_a_tool = True  # type: ignore[attr-defined]
        match.namespaces.append("marked")
        match.app_names.append("marked")
        match.kwargs["marked"] = True
        match.captured_kwargs["marked"] = True  # type: ignore[attr-defined]
        match.extra_kwargs["marked"] = True  # type: ignore[attr-defined]
        match.tried.append("marked")
        return [name for name, marked in parts.items() if marked]

    return mcp_site


@pytest.fixture(params=sorted(APPS))
def send(request: pytest.FixtureRequest, site: MCPSite) -> Send:
    return sender(request.param)


def structured(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["result"]["structuredContent"]


def test_each_request_has_its_own_resolver_match(send: Send) -> None:
    """A mark one request's code leaves on its ``resolver_match`` is not on the next's."""
    assert structured(send("/mcp", call("route_seen_before"))) == []
    assert structured(send("/mcp", call("route_seen_before"))) == []


def _tenant_routes(layout: str, site: MCPSite) -> list[Any]:
    """``/<tenant>/mcp`` to the tenant's endpoint: in one route, with the tenant in the
    prefix of an ``include()`` (whose value Django passes in ``kwargs`` only), with the
    captured value replaced by one the URLconf gives (the converter still decides), or
    with a regular expression's unnamed group (no converter, but any client could send
    paths of its own)."""
    view = TenantView.as_view(site=site)
    if layout == "route":
        return [path("<routestenant:tenant>/mcp", view)]
    if layout == "replaced":
        return [path("<routestenant:tenant>/mcp", view, {"tenant": "given"})]
    if layout == "regex":  # an unnamed group: a positional value, no converter
        return [re_path(r"^([a-z]+)/mcp$", view)]
    return [path("<routestenant:tenant>/", include([path("mcp", view)]))]


@pytest.mark.parametrize("layout", ["route", "include", "replaced"])
def test_a_path_with_captured_values_is_resolved_every_time(
    send: Send, site: MCPSite, layout: str
) -> None:
    """A converter may answer differently next time (a tenant closed): Django's 404, not
    the endpoint it routed to before."""
    test_urls.urlpatterns[:] = _tenant_routes(layout, site)
    clear_url_caches()
    for _ in range(2):
        assert structured(send("/acme/mcp", call("add", a=1, b=2))) == 3
    OPEN_TENANTS.discard("acme")
    try:
        assert send("/acme/mcp", call("add", a=1, b=2)).status_code == 404
    finally:
        OPEN_TENANTS.add("acme")


@pytest.mark.parametrize("layout", ["route", "include", "replaced", "regex"])
def test_no_path_with_captured_values_is_kept(site: MCPSite, layout: str) -> None:
    """Such a path is resolved every time, so none is kept: no client can fill the memory
    with paths of its own (while a path without any is kept, once per language; listed
    first, as a route of the project's own tried before it would make it resolved anew)."""
    test_urls.urlpatterns[:] = [path("mcp", site.urls), *_tenant_routes(layout, site)]
    clear_url_caches()
    for _ in range(2):
        assert routes.mcp_match_at("/acme/mcp") is not None
        assert routes.mcp_match_at("/mcp") is not None
    assert [path for path, _language in routes._routes] == ["/mcp"]


def test_a_route_tried_before_whose_converter_reads_state_is_heard(
    send: Send, site: MCPSite
) -> None:
    """``/acme/mcp`` is the endpoint while the tenant ``acme`` is closed; once it opens,
    the tenant's page listed before the endpoint takes the path, as Django routes it (the
    page reads the whole body): what was remembered while it was closed is not served."""
    test_urls.urlpatterns[:] = [
        path("<routestenant:tenant>/mcp", tenant_page),
        path("acme/mcp", site.urls),
    ]
    clear_url_caches()
    OPEN_TENANTS.discard("acme")
    try:
        for _ in range(2):
            assert structured(send("/acme/mcp", call("add", a=1, b=2))) == 3
    finally:
        OPEN_TENANTS.add("acme")
    with override_mcp(MAX_REQUEST_BYTES=4096):  # the page's body is no MCP body to bound
        answer = send("/acme/mcp", call("add", a=1, b=2, padding="x" * 5000))
    assert (answer.status_code, answer.text) == (418, "tools/call")


@pytest.mark.parametrize(
    ("after", "kept"),
    [
        ("plain after translated", [("/mcp", None)]),
        ("routes nothing", []),
        ("keeps nothing, keyed otherwise", []),
    ],
)
def test_no_answer_of_an_old_urlconf_lingers(
    site: MCPSite, settings: Any, after: str, kept: list[tuple[str, str | None]]
) -> None:
    """The first answer kept, or the first lookup, after a URLconf change empties the
    memory, even of answers under keys no request asks for any more: a translated
    URLconf's (keyed by language) once a plain one replaced it; any, when the new
    URLconf keeps no answer (it routes nothing; or a tenant route tried first makes
    ``/mcp`` resolved anew each time, and keyed by language too). The old URLconf is not
    kept alive by answers no request takes."""
    if after == "plain after translated":
        test_urls.urlpatterns[:] = i18n_patterns(
            path("mcp", site.urls), prefix_default_language=False
        )
    clear_url_caches()
    assert routes.mcp_match_at("/mcp") is not None
    if after == "routes nothing":
        settings.ROOT_URLCONF = "tests.http.test_native_routes"
    elif after == "plain after translated":
        test_urls.urlpatterns[:] = [path("mcp", site.urls)]
    else:
        # The tenant route's converter is asked of "mcp" (and refuses it) on each request.
        test_urls.urlpatterns[:] = [
            path("<routestenant:tenant>", tenant_page),
            path("mcp", site.urls),
        ]
    clear_url_caches()
    for _ in range(2):
        routes.mcp_match_at("/mcp")
    assert list(routes._routes) == kept


@pytest.mark.parametrize(
    ("tried_first", "anew"),
    [
        ("nothing", False),
        ("Django's converter", False),
        ("i18n_patterns", False),
        ("converter of its own", True),
        ("converter of its own, on another path", False),
        ("converter of its own, in a prefix the path does not take", False),
        ("converter of its own, in a prefix the path takes", True),
        ("converter of its own, below a prefix the path takes", True),
        ("converter of its own, below a prefix, on another path", False),
        ("pattern class of its own", True),
        ("URL class of its own", True),
    ],
)
def test_a_match_after_a_route_of_the_projects_own_is_resolved_anew(
    site: MCPSite, tried_first: str, anew: bool
) -> None:
    """What was tried before the endpoint decides whether its match may be kept: a route
    of the project's own may take the path next time (here each is tried, and refuses),
    unless its regular expression did not match what was left of the path, so that its
    converter was never asked (below the prefix ``m``, ``c<tenant>`` is tried on ``cp``,
    which it matches, while it would not match ``mcp``)."""
    page = tenant_page
    before: dict[str, list[Any]] = {
        "nothing": [],
        "Django's converter": [path("<int:number>/mcp", page)],
        "i18n_patterns": i18n_patterns(path("page", page), prefix_default_language=False),
        "converter of its own": [path("<routestenant:tenant>", page)],
        "converter of its own, on another path": [path("shop/<routestenant:tenant>/", page)],
        "converter of its own, in a prefix the path does not take": [
            path("shop/<routestenant:tenant>/", include([path("mcp", page)]))
        ],
        "converter of its own, in a prefix the path takes": [
            path("<routestenant:tenant>", include([path("/page", page)]))
        ],
        "converter of its own, below a prefix the path takes": [
            path("m", include([path("c<routestenant:tenant>", page)]))
        ],
        "converter of its own, below a prefix, on another path": [
            path("m", include([path("x<routestenant:tenant>", page)]))
        ],
        "pattern class of its own": [URLPattern(OwnPattern("page"), page)],
        "URL class of its own": [OwnURLPattern(RoutePattern("page"), page)],
    }
    test_urls.urlpatterns[:] = [*before[tried_first], path("mcp", site.urls)]
    clear_url_caches()
    assert routes.resolved_anew_each_time(resolve("/mcp"), "/mcp") is anew


@pytest.mark.parametrize("prefix", ["i18n_patterns", "re_path", "three includes"])
def test_a_converter_below_a_prefix_is_asked_of_what_the_prefix_leaves(
    site: MCPSite, prefix: str
) -> None:
    """Below a prefix of Django's own, a route is tried on what the prefix left of the
    path (``mcp``, which ``<tenant>`` matches): its converter was asked, so the endpoint
    beside it is resolved anew, and once the tenant ``mcp`` opens its page takes the
    path. The endpoint is a plain view, so that only the tenant's chain can tell."""
    routes_below = [
        path("<routestenant:tenant>", tenant_page),
        path("mcp", MCPView.as_view(site=site)),
    ]
    url = "/a/b/c/mcp" if prefix == "three includes" else "/en-us/mcp"
    if prefix == "i18n_patterns":
        test_urls.urlpatterns[:] = i18n_patterns(*routes_below)
    elif prefix == "re_path":
        test_urls.urlpatterns[:] = [re_path(r"^(?:en-us)/", include(routes_below))]
    else:
        deepest = include([path("c/", include(routes_below))])
        test_urls.urlpatterns[:] = [path("a/", include([path("b/", deepest)]))]
    clear_url_caches()
    with translation.override("en-us"):
        assert routes.resolved_anew_each_time(resolve(url), url) is True
        assert routes.mcp_match_at(url) is not None
        OPEN_TENANTS.add("mcp")
        try:
            assert routes.mcp_match_at(url) is None
        finally:
            OPEN_TENANTS.discard("mcp")


def test_a_tried_chain_django_would_not_make_is_resolved_anew(site: MCPSite) -> None:
    """Below a prefix whose regular expression refused the path, Django tries nothing; a
    ``tried`` that says otherwise (code may change a match) is not Django's to trust."""
    page = tenant_page
    refusing = path("shop/<routestenant:tenant>/", include([path("mcp", page)]))
    test_urls.urlpatterns[:] = [refusing, path("mcp", site.urls)]
    clear_url_caches()
    match = resolve("/mcp")
    assert routes.resolved_anew_each_time(match, "/mcp") is False
    match.tried = [[refusing, path("page", page)]]
    assert routes.resolved_anew_each_time(match, "/mcp") is True


def test_a_converter_of_the_projects_own_on_another_path_leaves_the_endpoint_kept(
    site: MCPSite,
) -> None:
    """A route with a converter of the project's own listed before the endpoint, whose
    regular expression never matches the endpoint's path, never asked its converter: the
    endpoint is remembered (the route's own paths, with a captured value, are not)."""
    test_urls.urlpatterns[:] = [
        path("shop/<routestenant:tenant>/", tenant_page),
        path("mcp", site.urls),
    ]
    clear_url_caches()
    for _ in range(2):
        assert routes.mcp_match_at("/mcp") is not None
        assert routes.mcp_match_at("/shop/acme/") is None
    assert [path for path, _language in routes._routes] == ["/mcp"]


def test_two_threads_keeping_answers_of_two_resolvers_leave_one_resolvers_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thread keeping an answer made with the old resolver, paused between checking
    whose answers the table holds and storing its own, while another keeps one made with
    the new: the table ends with the answers of one resolver only."""
    table = routes.RouteTable(8)
    monkeypatch.setattr(routes, "route_language", lambda resolver: None)
    old, new = object(), object()
    storing, go_on = threading.Event(), threading.Event()

    class PausingAnswers(dict[Any, Any]):
        def __setitem__(self, key: Any, value: Any) -> None:
            if value[0] is old:
                storing.set()
                go_on.wait(HANG_GUARD_SECONDS)
            super().__setitem__(key, value)

    table._answers = PausingAnswers()
    first = threading.Thread(target=table.keep, args=("/old", old, None))
    first.start()
    assert storing.wait(HANG_GUARD_SECONDS)
    second = threading.Thread(target=table.keep, args=("/new", new, None))
    second.start()
    second.join(1)  # it waits for the first (or, unguarded, has stored by now)
    go_on.set()
    first.join(HANG_GUARD_SECONDS)
    second.join(HANG_GUARD_SECONDS)
    assert {entry[0] for entry in table._answers.values()} == {new}


def test_an_answer_resolved_before_the_urlconf_changed_is_never_served(
    site: MCPSite, settings: Any
) -> None:
    """One thread resolves ``/mcp`` with the old URLconf while another changes it and asks
    the memory first (which then starts afresh): the first thread's answer, stored last,
    must not outlive the change (Django's resolver now routes ``/mcp`` nowhere)."""
    clear_url_caches()
    old = get_resolver()
    resolving, go_on = threading.Event(), threading.Event()
    real_resolve = old.resolve

    def slow_resolve(path: str) -> Any:
        found = real_resolve(path)
        resolving.set()
        go_on.wait(HANG_GUARD_SECONDS)
        return found

    old.resolve = slow_resolve  # type: ignore[method-assign]
    first = threading.Thread(target=routes.routes_to_mcp, args=("/mcp",))
    first.start()
    try:
        assert resolving.wait(HANG_GUARD_SECONDS)
        settings.ROOT_URLCONF = "tests.http.test_native_routes"  # routes nothing at /mcp
        assert get_resolver() is not old
        assert routes.routes_to_mcp("/nothing") is False
    finally:
        go_on.set()
        first.join(HANG_GUARD_SECONDS)
    with pytest.raises(Resolver404):
        resolve("/mcp")
    assert routes.mcp_match_at("/mcp") is None


@pytest.mark.parametrize("plain_first", [False, True], ids=["translated", "plain then translated"])
def test_a_translated_route_is_resolved_per_language(
    send: Send, site: MCPSite, plain_first: bool
) -> None:
    """``/mcp`` in English is ``/fr/mcp`` in French: once the thread's language is French
    (as a request through ``LocaleMiddleware`` leaves it under WSGI; the native paths run
    no middleware, so they resolve in that language), the path served in English is not
    the endpoint (Django's 404), on every path. Also when a plain URLconf was served
    first: what was read of it (its routes are the same in every language, so answers
    were kept by path alone: ``routes.route_language``) is not taken for the next one."""
    if plain_first:
        clear_url_caches()
        assert structured(send("/mcp", call("add", a=1, b=2))) == 3
    test_urls.urlpatterns[:] = i18n_patterns(path("mcp", site.urls), prefix_default_language=False)
    clear_url_caches()
    assert structured(send("/mcp", call("add", a=1, b=2))) == 3
    translation.activate("fr")
    try:
        assert send("/mcp", call("add", a=1, b=2)).status_code == 404
        assert structured(send("/fr/mcp", call("add", a=1, b=2))) == 3
    finally:
        translation.deactivate()
