"""``DJANGO_MCP["OAUTH"]``: the system check and the run-time configuration."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from django_mcp.auth.oauth.config import OAUTH_DEFAULTS, oauth_config, problems


def test_a_good_configuration_has_no_problems():
    assert problems({"RESOURCE": "https://host/mcp", "JWKS_URL": "https://a/jwks"}) == []


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ({"RESOURCE": "host/mcp"}, "RESOURCE"),
        ({"RESOURCE": "https://host/mcp#frag"}, "RESOURCE"),
        ({"ALGORITHMS": ["HS256"]}, "ALGORITHMS"),
        ({"ALGORITHMS": ["none"]}, "ALGORITHMS"),
        ({"JWKS_URL": "ftp://x"}, "JWKS_URL"),
        ({"LEEWAY_SECONDS": -1}, "LEEWAY_SECONDS"),
        ({"CREATE_USERS": "yes"}, "CREATE_USERS"),
        ({"INTROSPECTION_URL": "https://as/introspect"}, "INTROSPECTION_CLIENT_ID"),
        ({"TOKEN_TYPES": "at+jwt"}, "TOKEN_TYPES"),
        ({"TOKEN_TYPES": []}, "TOKEN_TYPES"),
        ({"TYPO": 1}, "TYPO"),
    ],
)
def test_problems_are_named(value, fragment):
    assert any(fragment in problem for problem in problems(value))


def test_the_system_check_reports_a_bad_oauth_setting(settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "OAUTH": {"ALGORITHMS": ["HS256"]}}
    with pytest.raises(SystemCheckError, match="OAUTH"):
        call_command("check")


def test_validators_need_a_resource(settings):
    """Without the canonical URI no audience can be checked: refuse to run, loudly."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "OAUTH": {}}
    with pytest.raises(ImproperlyConfigured, match="RESOURCE"):
        oauth_config()


def test_the_guide_lists_every_key_and_its_default():
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[2] / "docs/guides/oauth.md").read_text()
    for key, default in OAUTH_DEFAULTS.items():
        assert f"| `{key}` | `{default!r}` |" in guide, key
