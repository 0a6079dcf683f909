"""The official MCP Python SDK (``mcp`` 2.3) against a live Daphne server, and against the
native ASGI path under uvicorn: elicitation through MRTR, progress callbacks, and
``subscriptions/listen``.

basic/patterns/mrtr.mdx, client/elicitation.mdx, basic/patterns/progress.mdx and
basic/patterns/subscriptions.mdx: what a real 2026-07-28 client does with our streams
(each test's docstring says how the SDK drives that flow).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

from tests.sdk import run_sdk_client

if TYPE_CHECKING:
    from mcp.client import ClientRequestContext

    from tests.live import LiveServer

pytestmark = pytest.mark.live

CLIENT = types.Implementation(name="django-mcp-streams", version="1.0")
DEADLINE = 30.0  # seconds for one SDK session, start to end: a ceiling for a loaded machine


#: Run ``body`` with an auto-mode client (no response cache), bounded by DEADLINE.
run = partial(run_sdk_client, client_info=CLIENT, read_timeout_seconds=10, deadline=DEADLINE)


@pytest.fixture(params=["daphne", "native"])
def server(request: pytest.FixtureRequest) -> LiveServer:
    """Daphne through Django's handler, then uvicorn through ``NativeMCP``."""
    live: LiveServer = request.getfixturevalue(request.param)
    return live


def test_an_elicitation_round_trip_through_the_sdk(server: LiveServer):
    """basic/patterns/mrtr.mdx: the SDK answers the ``elicitation/create`` input request
    with its elicitation callback and retries with ``inputResponses`` and the echoed
    ``requestState``; the server completes the call."""
    asked: list[str] = []

    async def on_elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def body(client: Client) -> types.CallToolResult:
        await client.list_tools()
        return await client.call_tool("test_input_required_result_elicitation", {})

    result = run(server.url(), body, elicitation_callback=on_elicit)

    assert asked == ["What is your name?"]
    assert result.is_error is False
    assert result.content[0].text == "Hello, Ada!"


def test_progress_reaches_the_sdk_progress_callback(server: LiveServer):
    """basic/patterns/progress.mdx: the SDK sets the request id as ``progressToken`` and
    reads ``notifications/progress`` from the call's own SSE response."""
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async def body(client: Client) -> types.CallToolResult:
        await client.list_tools()
        return await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)

    result = run(server.url(), body)

    assert seen == [(0, 100), (50, 100), (100, 100)]
    assert result.is_error is False


def test_listen_through_the_sdk_is_acknowledged_and_receives_changes(server: LiveServer):
    """basic/patterns/subscriptions.mdx: the SDK's ``listen`` waits for the acknowledgement
    (``honored``), then yields typed change events: a tool registered at run time and an
    update of the subscribed resource."""

    async def body(client: Client) -> tuple[types.SubscriptionFilter, list[Any]]:
        await client.list_tools()
        events: list[Any] = []
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=["secret://a"]
        ) as subscription:
            honored = subscription.honored
            await client.call_tool("toggle_tool", {})
            await client.call_tool("notify", {"kind": "updated", "uri": "secret://a"})
            async for event in subscription:
                events.append(event)
                if isinstance(event, ResourceUpdated):
                    break
        await client.call_tool("toggle_tool", {})  # back as it was
        return honored, events

    honored, events = run(server.url("/streams/mcp"), body)

    assert honored.tools_list_changed is True
    assert list(honored.resource_subscriptions or []) == ["secret://a"]
    assert ToolsListChanged() in events
    assert events[-1] == ResourceUpdated(uri="secret://a")
