"""Limits: JSON nesting depth, tool argument size, and a per-call time limit.

Each is refused before (or instead of) the tool's answer with a spec-shaped error: a body
too deep is an invalid request (-32600, basic/index.mdx); arguments too large and calls too
long are tool execution errors (``isError: true``, server/tools.mdx, "Error Handling").
Every test declares its tools on a fresh site at ``/mcp`` (the ``mcp_site`` fixture).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import TYPE_CHECKING, Any

import pytest

from django_mcp import Context
from django_mcp.exceptions import RequestCancelled
from tests.helpers import assert_error, call_tool, mcp_body, mcp_headers, override_mcp, post_raw
from tests.helpers import result_of as result_of_response

if TYPE_CHECKING:
    from django.test import Client

    from django_mcp.sites import MCPSite


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def tool_error(response: Any) -> str:
    result = result_of_response(response)
    assert result.get("isError") is True, result
    text: str = result["content"][0]["text"]
    return text


@pytest.fixture
def echo(mcp_site: MCPSite) -> list[Any]:
    """A tool that records every call it receives."""
    calls: list[Any] = []

    @mcp_site.tool()
    def keep(value: Any) -> str:
        calls.append(value)
        return "kept"

    return calls


# -- JSON nesting depth ------------------------------------------------------------------------


def test_a_body_nested_too_deeply_is_an_invalid_request(client: Client, echo: list[Any]) -> None:
    """basic/index.mdx: a body that is not an acceptable request gets -32600 (HTTP 400),
    echoing the readable id; the tool never runs."""
    body = mcp_body("tools/call", {"name": "keep", "arguments": {"value": nested(200)}}, id=7)
    response = post_raw(client, json.dumps(body), mcp_headers(body))

    error = assert_error(response, 400, -32600)
    assert "nests deeper than 64 levels" in error["message"]
    assert response.json()["id"] == 7
    assert echo == []


def test_the_depth_limit_is_a_setting(client: Client, echo: list[Any]) -> None:
    """Top-level object, params, arguments: three levels before the value."""
    with override_mcp(MAX_JSON_DEPTH=6):
        ok = call_tool(client, "keep", {"value": nested(3)})
        deep = call_tool(client, "keep", {"value": nested(4)})

    assert result_of_response(ok)["content"][0]["text"] == "kept"
    assert_error(deep, 400, -32600)
    assert echo == [nested(3)]


# -- argument size ---------------------------------------------------------------------------


def test_arguments_over_the_size_limit_are_a_tool_error(client: Client, echo: list[Any]) -> None:
    """server/tools.mdx: input validation failures are tool execution errors, reported
    before the tool runs."""
    with override_mcp(MAX_TOOL_ARGUMENT_BYTES=100):
        small = call_tool(client, "keep", {"value": "x" * 50})
        large = call_tool(client, "keep", {"value": "x" * 200})

    assert result_of_response(small)["content"][0]["text"] == "kept"
    assert tool_error(large) == (
        "The arguments of tool keep are too large (212 bytes; the limit is 100)."
    )
    assert echo == ["x" * 50]


def test_a_lone_surrogate_counts_toward_the_argument_size() -> None:
    """Each lone surrogate is measured as the three bytes UTF-8 would give it, not an
    ``UnicodeEncodeError`` (admission refuses them in ``params``; a caller in Python, such
    as a task re-validating its arguments, may still pass one)."""
    from django_mcp.server.limits import LimitExceeded, check_argument_size

    with override_mcp(MAX_TOOL_ARGUMENT_BYTES=100):
        check_argument_size("keep", {"value": "\udc00" * 29})  # 99 bytes
        with pytest.raises(LimitExceeded, match=r"\(132 bytes; the limit is 100\)"):
            check_argument_size("keep", {"value": "\udc00" * 40})


# -- time limit --------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_an_async_tool_is_cancelled_at_the_time_limit(client: Client, mcp_site: MCPSite) -> None:
    """An ``async def`` tool that never finishes is cancelled at ``TOOL_TIMEOUT`` and the
    client gets a tool execution error."""
    seen: list[str] = []

    @mcp_site.tool()
    async def forever() -> str:
        try:  # bounded, so that without the limit the test fails instead of hanging
            await asyncio.wait_for(asyncio.Event().wait(), timeout=5)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        except TimeoutError:
            return "ran for five seconds"
        return "never"

    with override_mcp(TOOL_TIMEOUT=0.2):
        message = tool_error(call_tool(client, "forever", {}))

    assert message == "Tool forever timed out after 0.2 seconds."
    assert seen == ["cancelled"]


@pytest.mark.timeout(10)
def test_a_sync_tool_stops_at_its_next_check_after_the_limit(
    client: Client, mcp_site: MCPSite
) -> None:
    """A ``def`` tool cannot be interrupted; at the limit the request is cancelled, so
    its next ``ctx.check_cancelled()`` raises and it stops there."""
    seen: list[str] = []

    @mcp_site.tool()
    def steps(ctx: Context) -> str:
        stopped = threading.Event()
        ctx.on_cancel(stopped.set)
        stopped.wait(timeout=5)  # the work between two checks
        try:
            ctx.check_cancelled()
        except RequestCancelled:
            seen.append("stopped at the check")
            raise
        return "finished"

    with override_mcp(TOOL_TIMEOUT=0.2):
        message = tool_error(call_tool(client, "steps", {}))

    assert message == "Tool steps timed out after 0.2 seconds."
    assert seen == ["stopped at the check"]


@pytest.mark.timeout(10)
def test_a_sync_tool_that_finishes_late_does_not_report_success(
    client: Client, mcp_site: MCPSite
) -> None:
    """A ``def`` tool that never checks runs to its end; its late result is discarded and
    the client is told the call timed out -- the worker does not pretend it succeeded."""

    @mcp_site.tool()
    def stubborn(ctx: Context) -> str:
        overran = threading.Event()
        ctx.on_cancel(overran.set)
        overran.wait(timeout=5)
        return "late result"

    with override_mcp(TOOL_TIMEOUT=0.2):
        message = tool_error(call_tool(client, "stubborn", {}))

    assert message == "Tool stubborn timed out after 0.2 seconds."


def test_a_tool_within_the_limit_answers_normally(client: Client, echo: list[Any]) -> None:
    with override_mcp(TOOL_TIMEOUT=30):
        response = call_tool(client, "keep", {"value": 1})

    assert result_of_response(response)["content"][0]["text"] == "kept"
