"""The route memories (``django_mcp.http.routes``, and ``MCPMiddleware``'s learnt routes in
``django_mcp.http.stack``) read the active language only for a URLconf whose routes vary
by language (``routes.route_language``); tests/http/test_native_routes.py has a plain
URLconf replaced by a translated one.

Served through the four ways a project serves MCP (tests/http/four_paths.py), each
expected to answer alike (basic/transports/streamable-http.mdx, "Sending Messages to the
Server": a POST to the endpoint gets its JSON-RPC answer; a path that is not the endpoint
is Django's 404).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from django.conf.urls.i18n import i18n_patterns
from django.urls import (
    URLPattern,
    clear_url_caches,
    get_resolver,
    include,
    path,
    re_path,
)
from django.urls.resolvers import RoutePattern
from django.utils import translation
from django.utils.translation import gettext_lazy

from django_mcp.http import routes
from django_mcp.sites import MCPSite
from tests import urls as test_urls
from tests.http.four_paths import APPS, Send, sender
from tests.http.native_support import call
from tests.http.own_routes import (
    OwnList,
    OwnPattern,
    OwnResolver,
    OwnURLPattern,
    section_page,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("keep_the_test_database_connection")]

#: What an ``include()`` of this module routes: itself, again (a URLconf that includes
#: itself must not make the walk loop).
urlpatterns: list[Any] = []


@pytest.fixture
def site(mcp_site: MCPSite) -> MCPSite:
    @mcp_site.tool
    def add(a: int, b: int) -> int:
        return a + b

    return mcp_site


@pytest.fixture(params=sorted(APPS))
def send(request: pytest.FixtureRequest, site: MCPSite) -> Send:
    return sender(request.param)


@pytest.fixture
def language_reads(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Each read of the active language by the route memories, with what it answered."""
    reads: list[str | None] = []
    real = routes.get_language

    def counted() -> str | None:
        reads.append(real())
        return reads[-1]

    monkeypatch.setattr(routes, "get_language", counted)
    return reads


def structured(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["result"]["structuredContent"]


def _urlconf(layout: str, site: MCPSite) -> list[Any]:
    """``/mcp`` to the endpoint, beside or inside routes of each kind."""
    plain = [path("mcp", site.urls), re_path(r"^other/$", site.urls)]
    layouts: dict[str, list[Any]] = {
        "plain": plain,
        "plain, included twice deep": [path("", include([path("", include(plain))]))],
        "i18n_patterns": i18n_patterns(*plain, prefix_default_language=False),
        "translated route": [*plain, path(gettext_lazy("about/"), site.urls)],
        "translated regex": [*plain, re_path(gettext_lazy(r"^about/$"), site.urls)],
        "translated route, included twice deep": [
            *plain,
            path("a/", include([path("b/", include([path(gettext_lazy("c/"), site.urls)]))])),
        ],
        "pattern class of its own": [*plain, URLPattern(OwnPattern("own"), site.urls)],
        "URL class of its own": [*plain, OwnURLPattern(RoutePattern("own"), site.urls)],
        "includes itself": [*plain, path("again/", include("tests.http.test_route_language"))],
        "Django's converters": [
            *plain,
            path("<int:n>/<slug:s>/<uuid:u>/<str:t>/<path:p>", site.urls),
        ],
        "converter of its own": [path("<languagesection:section>/mcp", section_page), *plain],
        "subclass of Django's converter": [*plain, path("<ownslug:s>/page", section_page)],
        "resolver class of its own": [*plain, OwnResolver(RoutePattern("own/"), [])],
        "urlpatterns container of its own": [
            *plain,
            path("own/", include(OwnList([path("mcp", site.urls)]))),
        ],
    }
    return layouts[layout]


@pytest.mark.parametrize(
    ("layout", "varies"),
    [
        ("plain", False),
        ("plain, included twice deep", False),
        ("includes itself", False),
        ("Django's converters", False),
        ("i18n_patterns", True),
        ("translated route", True),
        ("translated regex", True),
        ("translated route, included twice deep", True),
        ("pattern class of its own", True),
        ("URL class of its own", True),
        ("converter of its own", True),
        ("subclass of Django's converter", True),
        ("resolver class of its own", True),
        ("urlpatterns container of its own", True),
    ],
)
def test_only_a_urlconf_of_plain_django_patterns_is_read_as_fixed(
    site: MCPSite, layout: str, varies: bool
) -> None:
    test_urls.urlpatterns[:] = _urlconf(layout, site)
    urlpatterns[:] = test_urls.urlpatterns if layout == "includes itself" else []
    clear_url_caches()
    try:
        assert routes.varies_by_language(get_resolver()) is varies
    finally:
        urlpatterns.clear()


def test_a_urlconf_that_cannot_be_read_counts_as_varying(settings: Any) -> None:
    settings.ROOT_URLCONF = "tests.http.no_such_urlconf"
    assert routes.varies_by_language(get_resolver()) is True


def test_a_plain_urlconf_is_served_without_reading_the_language(
    send: Send, language_reads: list[str | None]
) -> None:
    """The memories key a plain URLconf's answers by path alone: reading the language
    was the dearest step of a lookup (see ``routes.route_language``)."""
    clear_url_caches()
    for _ in range(3):
        assert structured(send("/mcp", call("add", a=1, b=2))) == 3
    assert language_reads == []


def test_a_route_whose_converter_reads_the_language_is_heard_in_each_language(
    send: Send, site: MCPSite
) -> None:
    """``/rubrique/mcp`` is the endpoint in English, but in French a route listed before
    it takes the path (its converter accepts ``rubrique`` in French only): every path
    answers as Django routes, in each language."""
    test_urls.urlpatterns[:] = [
        path("<languagesection:section>/mcp", section_page),
        path("rubrique/mcp", site.urls),
    ]
    clear_url_caches()
    assert structured(send("/rubrique/mcp", call("add", a=1, b=2))) == 3
    translation.activate("fr")
    try:
        assert send("/rubrique/mcp", call("add", a=1, b=2)).status_code == 418
    finally:
        translation.deactivate()
    assert structured(send("/rubrique/mcp", call("add", a=1, b=2))) == 3
