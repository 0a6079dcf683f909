"""The capabilities of the site asked about last, kept beside the per-site table: they
follow every registration change, from one site to another, and keep no site alive."""

from __future__ import annotations

import gc
import weakref

from django_mcp.server.capabilities import capabilities, offers
from django_mcp.sites import MCPSite


def test_a_registration_change_is_seen_by_the_next_request() -> None:
    site = MCPSite(name="caps-changing")
    assert not offers(site, "tools")
    assert not offers(site, "tools")  # asked again: from the last-site cache

    @site.tool()
    def ping() -> str:
        return "pong"

    assert offers(site, "tools")
    assert "tools" in capabilities(site)


def test_two_sites_asked_in_turn_each_get_their_own() -> None:
    with_tools, without = MCPSite(name="caps-tools"), MCPSite(name="caps-none")

    @with_tools.tool()
    def ping() -> str:
        return "pong"

    for _ in range(2):
        assert offers(with_tools, "tools")
        assert not offers(without, "tools")


def test_the_site_asked_about_last_is_not_kept_alive() -> None:
    site = MCPSite(name="caps-ephemeral")

    @site.tool()
    def ping() -> str:
        return "pong"

    assert offers(site, "tools")
    gone = weakref.ref(site)
    del site, ping
    gc.collect()
    assert gone() is None
