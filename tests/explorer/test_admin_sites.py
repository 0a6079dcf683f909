"""The explorer on more than one ``AdminSite``: which one the endpoint's browser page links."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib import admin
from django.contrib.admin import AdminSite
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import clear_url_caches, path, set_script_prefix

from django_mcp.explorer.admin import install
from django_mcp.sites import MCPSite
from tests import urls as test_urls

pytestmark = pytest.mark.django_db

HTML = {"HTTP_ACCEPT": "text/html"}


@pytest.fixture
def ops_site(mcp_site: MCPSite) -> Iterator[AdminSite]:
    """A second admin site, "ops" at /ops/, with the explorer, next to admin.site at
    /admin/; the ``mcp_site`` "test" at /mcp."""
    ops = AdminSite(name="ops")
    install(ops)
    test_urls.urlpatterns += [path("admin/", admin.site.urls), path("ops/", ops.urls)]
    clear_url_caches()
    yield ops
    clear_url_caches()


def clerk(client: Client) -> Client:
    get_user_model().objects.create_user("clerk", password="secret", is_staff=True)
    client.login(username="clerk", password="secret")
    return client


def explorer_link(client: Client) -> str | None:
    page = client.get("/mcp", **HTML)
    assert page.status_code == 200
    text = page.content.decode()
    marker = 'id="mcp-explorer-link" href="'
    if marker not in text:
        return None
    return text.split(marker, 1)[1].split('"', 1)[0]


def test_the_page_links_the_explorer_of_an_admin_site_the_user_may_use(
    client: Client, ops_site: AdminSite, monkeypatch: pytest.MonkeyPatch
):
    # admin.site is for superusers here; "ops" for any staff (AdminSite's default).
    monkeypatch.setattr(admin.site, "has_permission", lambda request: request.user.is_superuser)
    clerk(client)
    link = explorer_link(client)
    assert link == "/ops/django_mcp/explorer/test/"
    assert client.get(link).status_code == 200


def test_the_default_admin_site_comes_first_when_the_user_may_use_both(
    client: Client, ops_site: AdminSite
):
    clerk(client)
    assert explorer_link(client) == "/admin/django_mcp/explorer/test/"


def test_no_link_when_the_user_may_use_no_admin_site(
    client: Client, ops_site: AdminSite, monkeypatch: pytest.MonkeyPatch
):
    for site in (admin.site, ops_site):
        monkeypatch.setattr(site, "has_permission", lambda request: request.user.is_superuser)
    clerk(client)
    assert explorer_link(client) is None


def test_an_admin_site_without_the_explorer_is_passed_over(
    client: Client, mcp_site: MCPSite, monkeypatch: pytest.MonkeyPatch
):
    """admin.site is not routed; "ops" (explorer) and "plain" (none) are. Reversing the
    namespace "admin" falls back to the last routed instance ("plain", no explorer):
    no link was given, though "ops" has the explorer."""
    plain = AdminSite(name="plain")
    ops = AdminSite(name="ops")
    install(ops)
    test_urls.urlpatterns += [path("ops/", ops.urls), path("plain/", plain.urls)]
    clear_url_caches()
    try:
        clerk(client)
        assert explorer_link(client) == "/ops/django_mcp/explorer/test/"
    finally:
        clear_url_caches()


def routed_admin_site(name: str) -> AdminSite:
    """An admin site named ``name`` with the explorer, routed at /odd/ beside admin.site."""
    odd = AdminSite(name=name)
    install(odd)
    test_urls.urlpatterns += [path("admin/", admin.site.urls), path("odd/", odd.urls)]
    clear_url_caches()
    return odd


def test_e015_an_explorer_admin_site_whose_name_holds_a_colon(client: Client, mcp_site: MCPSite):
    """reverse() reads ":" as a namespace separator, so "ops:v2:django_mcp_explorer" names
    no route: every page of that admin site listing the explorer (its index, and every page
    with the nav sidebar) failed with a 500 at run time; those pages now leave the links
    out (the test below), and the check says why at startup."""
    from django_mcp.setup_checks import check_explorer_admin_sites

    routed_admin_site("ops:v2")
    try:
        [message] = check_explorer_admin_sites(None)
    finally:
        clear_url_caches()
    assert message.id == "django_mcp.E015"
    assert "'ops:v2'" in message.msg
    assert "':'" in message.hint


@pytest.mark.parametrize("name", ["", "ops/v2", "ops v2", "opérations"])
def test_e015_is_silent_for_names_reversing_reads_whole(
    client: Client, mcp_site: MCPSite, name: str
):
    """An empty name, a slash, a space, non-ASCII: the instance namespace reverses as a
    whole, and the admin index (which lists the explorer) is served."""
    from django_mcp.setup_checks import check_explorer_admin_sites

    routed_admin_site(name)
    try:
        assert check_explorer_admin_sites(None) == []
        get_user_model().objects.create_superuser("admin", "a@example.com", "secret")
        client.login(username="admin", password="secret")
        assert client.get("/odd/").status_code == 200
    finally:
        clear_url_caches()


@pytest.mark.parametrize(("prefix", "spelled"), [("/app/", "/app/"), ("/my app/", "/my%20app/")])
def test_the_link_survives_a_script_prefix(
    client: Client, ops_site: AdminSite, prefix: str, spelled: str
):
    """Django served below a prefix (SCRIPT_NAME, or FORCE_SCRIPT_NAME, which Django's
    handlers set as the script prefix; the test client does not): the link carries the
    prefix, as reverse() gives it, and the route is still found (resolve() takes the path
    below the prefix, and reverse() percent-encodes it: "/my app/" is "/my%20app/")."""
    clerk(client)
    set_script_prefix(prefix)
    try:
        page = client.get("/mcp", **HTML)
    finally:
        set_script_prefix("/")
    assert page.status_code == 200
    link = f'id="mcp-explorer-link" href="{spelled}admin/django_mcp/explorer/test/"'
    assert link in page.content.decode()


def test_an_admin_site_whose_name_holds_a_colon_still_serves_its_index(
    client: Client, mcp_site: MCPSite
):
    """A deployment started without manage.py (plain gunicorn) never runs the checks, so
    E015 is not seen: the explorer's links on the index of an admin site named "ops:v2"
    do not reverse, and they are left out rather than failing the whole page with a 500.
    Its explorer page is still served at its URL."""
    routed_admin_site("ops:v2")
    try:
        get_user_model().objects.create_superuser("admin", "a@example.com", "secret")
        client.login(username="admin", password="secret")
        index = client.get("/odd/")
        assert index.status_code == 200
        assert "MCP explorer" not in index.content.decode()
        assert client.get("/odd/django_mcp/explorer/test/").status_code == 200
    finally:
        clear_url_caches()
