"""``Host`` is validated against ``ALLOWED_HOSTS`` once per distinct header where nothing
upstream validated it (django_mcp/http/hosts.py), and a refusal is never remembered.

DNS rebinding (basic/transports/streamable-http.mdx, "Security Warning"): servers must
validate the ``Host`` of every request; these tests hold the remembered answer to the
same rules as Django's ``get_host`` for every request, including after a settings change.
Through the native WSGI path, which has no ``CommonMiddleware`` in front of it.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from django.core.wsgi import get_wsgi_application
from django.http import HttpRequest

from django_mcp.http import hosts
from django_mcp.http.native_wsgi import NativeMCPWSGI
from django_mcp.sites import MCPSite
from tests.http.native_support import mcp

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_hosts(keep_the_test_database_connection: None) -> None:
    """No host validated by an earlier test, and requests served in the test's thread
    (tests/http/conftest.py)."""
    hosts._passed.clear()


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every host Django's ``get_host`` validated."""
    seen: list[str] = []
    original = HttpRequest.get_host

    def counting(self: HttpRequest) -> str:
        seen.append(self.META.get("HTTP_HOST", ""))
        return original(self)

    monkeypatch.setattr(HttpRequest, "get_host", counting)
    return seen


def send(host: str) -> httpx.Response:
    app = NativeMCPWSGI(get_wsgi_application())
    transport = httpx.WSGITransport(app=app, remote_addr="127.0.0.1")
    with httpx.Client(transport=transport, base_url="http://testserver") as c:
        return c.request(**{"method": "POST", "url": "/mcp", **mcp("server/discover", Host=host)})


def test_an_allowed_host_is_validated_once(mcp_site: MCPSite, validations: list[str]):
    answers = [send("localhost").status_code for _ in range(3)]

    assert answers == [200, 200, 200]
    assert validations == ["localhost"]


def test_a_refused_host_is_refused_every_time(mcp_site: MCPSite, validations: list[str]):
    assert send("localhost").status_code == 200
    answers = [send("evil.example").status_code for _ in range(2)]

    assert answers == [400, 400]
    assert validations == ["localhost", "evil.example", "evil.example"]


def test_a_remembered_host_is_refused_once_allowed_hosts_no_longer_has_it(
    mcp_site: MCPSite, settings: Any
):
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    assert send("localhost").status_code == 200

    settings.ALLOWED_HOSTS = ["testserver"]

    assert send("localhost").status_code == 400


def test_forged_hosts_cannot_grow_what_is_remembered(mcp_site: MCPSite, settings: Any):
    settings.ALLOWED_HOSTS = ["*"]

    for number in range(hosts.LIMIT + 10):
        assert send(f"host{number}.example").status_code == 200

    assert 0 < len(hosts._passed) <= hosts.LIMIT


def test_a_host_removed_in_place_is_refused_at_once(mcp_site: MCPSite, settings: Any):
    """No ``setting_changed`` when a list is changed in place: the settings are compared
    on every request, so the remembered host is not trusted any longer."""
    settings.ALLOWED_HOSTS = ["localhost", "testserver"]
    assert send("localhost").status_code == 200

    settings.ALLOWED_HOSTS.remove("localhost")

    assert send("localhost").status_code == 400


class Dynamic:
    """An ``ALLOWED_HOSTS`` that answers from elsewhere (a database, say)."""

    def __init__(self, hosts: list[str]) -> None:
        self.hosts = hosts

    def __iter__(self) -> Any:
        return iter(self.hosts)


def test_an_allowed_hosts_object_that_is_not_a_list_is_asked_every_time(
    mcp_site: MCPSite, settings: Any, validations: list[str]
):
    dynamic = Dynamic(["localhost", "testserver"])
    settings.ALLOWED_HOSTS = dynamic
    assert [send("localhost").status_code for _ in range(2)] == [200, 200]

    dynamic.hosts = ["testserver"]

    assert send("localhost").status_code == 400
    assert validations == ["localhost"] * 3
