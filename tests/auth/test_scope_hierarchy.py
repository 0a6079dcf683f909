"""Scope hierarchies (basic/authorization/index.mdx, "Step-Up Authorization Flow": "Servers
MUST account for scope hierarchies, where a broader scope implies narrower ones, when
deciding whether a token is sufficient for an operation"): ``SCOPE_HIERARCHY``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.core.checks import run_checks

from django_mcp.auth.caller import Caller
from django_mcp.protocol import errors
from django_mcp.sites import MCPSite
from tests.auth.conftest import bearer
from tests.helpers import assert_error, call_tool, override_mcp, result_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.test import Client

pytestmark = pytest.mark.django_db

HIERARCHY = {"books:admin": ["books:write"], "books:write": ["books:read"]}


def test_a_broader_scope_passes_a_check_for_the_narrower_ones_it_implies(
    client: Client, auth_site: MCPSite, issue: Callable[..., str]
) -> None:
    """The ``write`` tool needs books:write and books:read; books:admin implies the first
    directly and the second through it."""
    token = issue("books:admin")
    with override_mcp(SCOPE_HIERARCHY=HIERARCHY):
        response = call_tool(client, "write", {}, headers=bearer(token))
    assert result_of(response)["content"][0]["text"] == "written"


def test_without_a_hierarchy_the_broader_scope_is_refused(
    client: Client, auth_site: MCPSite, issue: Callable[..., str]
) -> None:
    """What the test above passes only because of ``SCOPE_HIERARCHY``: by default a scope
    implies nothing, and the challenge names the declaration's own scopes."""
    response = call_tool(client, "write", {}, headers=bearer(issue("books:admin")))
    assert_error(response, 403, errors.INVALID_REQUEST)
    assert 'scope="books:read books:write"' in response["WWW-Authenticate"]


def test_a_narrower_scope_never_implies_a_broader_one(
    client: Client, auth_site: MCPSite, issue: Callable[..., str]
) -> None:
    """books:read is implied by books:write, not the other way round: still 403, and the
    challenge names what the tool requires, not the broader scope that would imply it."""
    with override_mcp(SCOPE_HIERARCHY=HIERARCHY):
        response = call_tool(client, "write", {}, headers=bearer(issue("books:read")))
    assert_error(response, 403, errors.INVALID_REQUEST)
    value = response["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in value
    assert 'scope="books:read books:write"' in value


@pytest.mark.parametrize(
    ("granted", "required", "expected"),
    [
        ({"a"}, {"c"}, True),  # a -> b -> c
        ({"b"}, {"a"}, False),
        ({"c"}, {"b", "c"}, False),
        ({"x"}, {"x"}, True),  # a scope outside the hierarchy implies itself only
        ({"loop1"}, {"loop2"}, True),  # a cycle ends
        (set(), {"a"}, False),
    ],
)
def test_caller_has_scopes_follows_the_hierarchy_transitively(
    granted: set[str], required: set[str], expected: bool
) -> None:
    hierarchy = {"a": ["b"], "b": ["c"], "loop1": ["loop2"], "loop2": ["loop1"]}
    caller = Caller(user=None, scopes=frozenset(granted), credential="token:1")
    with override_mcp(SCOPE_HIERARCHY=hierarchy):
        assert caller.has_scopes(required) is expected
        assert caller.lacks(required) == (frozenset() if expected else frozenset(required))


@pytest.mark.parametrize(
    ("hierarchy", "implied"),
    [
        ({"a": None}, set()),
        ({"a": "bc"}, set()),
        ({"a": {"b"}}, set()),
        ({1: ["b"]}, set()),
        ({"a": [None, "c"]}, {"c"}),
    ],
)
def test_a_malformed_entry_implies_nothing_at_request_time(
    hierarchy: dict[Any, Any], implied: set[str]
) -> None:
    """A process that never ran the system checks (gunicorn does not) meets a malformed
    hierarchy at request time: an entry E004 would refuse implies nothing (only the strings
    of a list count), rather than failing every scope check with a TypeError
    ({"a": None}) or reading a string as one-letter scopes ({"a": "bc"})."""
    caller = Caller(user=None, scopes=frozenset({"a"}), credential="token:1")
    with override_mcp(SCOPE_HIERARCHY=hierarchy):
        for scope in ("b", "c"):
            assert caller.has_scopes({scope}) is (scope in implied)


@pytest.mark.parametrize(
    "value",
    [
        {"books:admin": {"books:write"}},
        ["books:admin"],
        {"books:admin": "books:write"},
        {"books:admin": ["books write"]},
        {"": ["books:write"]},
        {"books:admin": [""]},
        {"books:admin": [1]},
    ],
)
def test_a_malformed_hierarchy_fails_system_check_e004(value: Any) -> None:
    """docs/checks.md: every setting is checked at startup (E004)."""
    with override_mcp(SCOPE_HIERARCHY=value):
        messages = [m for m in run_checks() if m.id == "django_mcp.E004"]
    assert any("SCOPE_HIERARCHY" in m.msg for m in messages), messages


def test_a_well_formed_hierarchy_passes_the_checks() -> None:
    with override_mcp(SCOPE_HIERARCHY=HIERARCHY):
        messages = [m for m in run_checks() if m.id == "django_mcp.E004"]
    assert messages == []
