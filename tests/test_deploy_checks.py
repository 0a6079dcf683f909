"""``check --deploy`` warnings (django_mcp/deploy_checks.py, docs/checks.md): each one
triggered by the setting it is about, and silent once that setting is safe."""

from __future__ import annotations

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

from django_mcp import deploy_checks
from django_mcp.deploy_checks import check_deployment, is_loopback_only
from django_mcp.sites import MCPSite
from tests.helpers import override_mcp

SAFE = {
    "SECRET_KEY": "a-real-secret-" + "x" * 40,
    "DEBUG": False,
    "ALLOWED_HOSTS": ["localhost", "127.0.0.1", "[::1]"],
    "ASGI_APPLICATION": "testproject.asgi.application",
}


def warnings(**overrides: object) -> list[str]:
    with override_settings(**{**SAFE, **overrides}):
        return [message.id for message in check_deployment(None) if message.id]


def test_registered_for_deploy_only():
    assert check_deployment in checks.registry.registry.get_checks(include_deployment_checks=True)
    assert check_deployment not in checks.registry.registry.get_checks()


def test_a_safe_configuration_passes(sites):
    assert warnings() == []


def test_w001_for_the_public_demo_secret_key():
    assert warnings(SECRET_KEY="django-mcp-demo-not-secret") == ["django_mcp.W001"]


def test_the_testproject_demo_key_is_the_one_w001_knows():
    from django_mcp.deploy_checks import PUBLIC_SECRET_KEYS
    from testproject.settings import PUBLIC_DEMO_SECRET_KEY

    assert PUBLIC_DEMO_SECRET_KEY in PUBLIC_SECRET_KEYS


def test_w002_for_debug():
    assert warnings(DEBUG=True) == ["django_mcp.W002"]


@pytest.fixture
def sites(monkeypatch):
    """The sites the check sees: a fixed list, not whatever other tests left alive."""
    chosen: list[MCPSite] = [MCPSite("mcp")]
    monkeypatch.setattr(deploy_checks, "served_sites", lambda: chosen)
    return chosen


@pytest.mark.parametrize("hosts", [["mcp.example.com"], ["*"], ["localhost", ".example.com"]])
def test_w003_for_a_public_host_admitting_anonymous_callers_by_default(sites, hosts):
    """The defaults (token and session authenticators, REQUIRE_AUTHENTICATION False) let a
    caller with no credentials in: the check reads the effective settings, not the raw
    dict, which has no AUTHENTICATORS key here."""
    assert warnings(ALLOWED_HOSTS=hosts) == ["django_mcp.W003"]


def test_w003_names_the_open_sites_and_how_to_close_them(sites):
    sites.append(MCPSite("internal", require_authentication=True))
    sites.append(MCPSite("public"))
    with override_settings(**{**SAFE, "ALLOWED_HOSTS": ["mcp.example.com"]}):
        (message,) = check_deployment(None)
    assert "'mcp', 'public'" in message.hint
    assert "'internal'" not in message.hint
    assert "REQUIRE_AUTHENTICATION" in message.hint


def test_w003_is_silent_when_every_site_requires_authentication(sites):
    sites.append(MCPSite("internal", require_authentication=True))
    with override_mcp(REQUIRE_AUTHENTICATION=True):
        assert warnings(ALLOWED_HOSTS=["mcp.example.com"]) == []


def test_w003_is_about_required_authentication_not_the_authenticator_list(sites):
    """No authenticator with authentication required refuses every caller (401): it
    locks everyone out but opens nothing, so it is not this warning's concern. An
    authenticator with authentication not required still admits anonymous callers."""
    with override_mcp(AUTHENTICATORS=[], REQUIRE_AUTHENTICATION=True):
        assert warnings(ALLOWED_HOSTS=["mcp.example.com"]) == []
    with override_mcp(AUTHENTICATORS=[]):
        assert warnings(ALLOWED_HOSTS=["mcp.example.com"]) == ["django_mcp.W003"]
    with override_mcp(AUTHENTICATORS=["myproject.auth.TokenAuthenticator"]):
        assert warnings(ALLOWED_HOSTS=["mcp.example.com"]) == ["django_mcp.W003"]
    with override_mcp(
        AUTHENTICATORS=["myproject.auth.TokenAuthenticator"], REQUIRE_AUTHENTICATION=True
    ):
        assert warnings(ALLOWED_HOSTS=["mcp.example.com"]) == []


def test_w003_is_silent_on_loopback(sites):
    assert warnings() == []


@pytest.mark.parametrize(
    ("hosts", "loopback"),
    [([], True), (["localhost", "127.0.0.1", "[::1]"], True), (["LOCALHOST"], True),
     (["testserver"], False), (["*"], False)],
)  # fmt: skip
def test_is_loopback_only(hosts, loopback):
    assert is_loopback_only(hosts) is loopback


def test_manage_py_check_deploy_reports_them():
    with override_settings(**{**SAFE, "DEBUG": True}), pytest.raises(SystemCheckError) as info:
        call_command("check", deploy=True, fail_level="WARNING", tags=["security"])
    assert "django_mcp.W002" in str(info.value)


def test_the_sites_are_read_from_the_urlconf():
    """Only what a URL serves: the test project routes its default site at ``/mcp``; a
    site made here and routed nowhere is no one's door."""
    from django_mcp.sites import site

    unrouted = MCPSite("unrouted")
    found = deploy_checks.served_sites()
    assert site in found
    assert unrouted not in found


@pytest.mark.parametrize(
    ("application", "warned"),
    [
        ("django_alone", True),
        ("channels_unbounded", True),
        ("middleware_over_django", True),
        ("static_over_django", True),
        ("static_over_bounded", False),
        ("lifespan_django", True),
        ("labelled_django", True),
        ("bounding_django", False),
        ("channels_stack_over_django", True),
        ("channels_stack_over_bounded", False),
        ("bounded", False),
        ("native", False),
        ("channels_bounded", False),
        ("middleware_over_bounded", False),
        ("unknown", False),
        ("no_such_name", False),  # not importable: Django says so where it is used
    ],
)
def test_w004_for_an_asgi_application_that_reads_bodies_whole(sites, application, warned):
    """docs/deployment.md: Django's ASGI handler reads a whole request body before any
    middleware runs, so without ``BodyLimit`` (or ``NativeMCP``) in front of it a huge MCP
    body is read in full before ``MAX_REQUEST_BYTES`` refuses it
    (basic/transports/streamable-http.mdx leaves limits to the server)."""
    found = warnings(ASGI_APPLICATION=f"tests.asgi_variants.{application}")
    assert found == (["django_mcp.W004"] if warned else [])


def test_w004_is_silent_without_asgi_application(sites):
    """A WSGI-only project names no ASGI application."""
    assert warnings(ASGI_APPLICATION=None) == []
