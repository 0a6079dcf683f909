"""A handler's broad ``except Exception`` around an ask, through ``/mcp``: the round
still ends with ``input_required``.

basic/patterns/mrtr.mdx: a server that needs input answers ``resultType:
"input_required"`` with the ``inputRequests``, and the client retries with the answers.
``InputRequired`` unwinds the handler to say so; as an ``Exception`` it was swallowed by
``try: ... except Exception:`` around ``ctx.elicit``, and the round completed with whatever
the handler did next, the question never sent. It derives from ``BaseException`` now, as
``asyncio.CancelledError`` does for the same reason.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from django.core.asgi import get_asgi_application

from django_mcp import Context
from django_mcp.http.native import NativeMCP
from django_mcp.sites import MCPSite
from tests.helpers import input_required, mcp_post, request_meta, result_of
from tests.http.native_support import mcp
from tests.tasks.support import declaring, get, run_worker

pytestmark = pytest.mark.django_db

ASKING = {"elicitation": {}}
YES = {"confirm": {"action": "accept", "content": {"ok": True}}}


def careful(ctx: Context) -> str:
    """An ask wrapped in the broad ``except`` handlers are often written with."""
    try:
        answer = ctx.elicit("Go ahead?", {"ok": bool}, key="confirm")
    except Exception:
        return "asking failed"
    return f"answered {answer.action}"


async def acareful(ctx: Context) -> str:
    try:
        answer = ctx.elicit("Go ahead?", {"ok": bool}, key="confirm")
    except Exception:
        return "asking failed"
    return f"answered {answer.action}"


def call(client: Any, method: str, params: dict[str, Any]) -> Any:
    return mcp_post(client, method, params, meta=request_meta(capabilities=ASKING))


@pytest.mark.parametrize("handler", [careful, acareful], ids=["sync", "async"])
def test_a_tool_that_catches_exception_around_an_ask_still_asks(
    client: Any, mcp_site: MCPSite, handler: Any
) -> None:
    """It was a complete result "asking failed"; the question was never sent."""
    mcp_site.tool(name="careful")(handler)

    first = input_required(call(client, "tools/call", {"name": "careful", "arguments": {}}))
    assert set(first["inputRequests"]) == {"confirm"}
    params = {"name": "careful", "arguments": {}, "inputResponses": YES}
    params["requestState"] = first["requestState"]
    result = result_of(call(client, "tools/call", params))
    assert result["content"][0]["text"] == "answered accept"


@pytest.mark.django_db(transaction=True)
def test_an_async_tool_awaited_on_the_native_loop_still_asks(mcp_site: MCPSite) -> None:
    """The native ASGI path (an ``async def`` tool on an ungated site, no thread) too."""
    mcp_site.tool(name="careful")(acareful)
    params = {"name": "careful", "arguments": {}}

    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=NativeMCP(get_asgi_application()))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            request = mcp("tools/call", params, meta=request_meta(capabilities=ASKING))
            return await c.post("/mcp", **request)

    response = asyncio.run(run())

    assert response.json()["result"]["resultType"] == "input_required"


def test_a_prompt_that_catches_exception_around_an_ask_still_asks(
    client: Any, mcp_site: MCPSite
) -> None:
    mcp_site.prompt(name="careful")(careful)

    first = input_required(call(client, "prompts/get", {"name": "careful", "arguments": {}}))

    assert set(first["inputRequests"]) == {"confirm"}


def test_a_task_that_catches_exception_around_an_ask_waits_for_input(
    client: Any, mcp_site: MCPSite
) -> None:
    """tasks.md: a task that needs input is ``input_required``; it completed with
    "asking failed" instead."""
    mcp_site.tool(name="careful", task="required")(careful)
    response = mcp_post(
        client, "tools/call", {"name": "careful", "arguments": {}}, meta=declaring()
    )
    task_id = result_of(response)["taskId"]
    run_worker()

    task = get(client, task_id)

    assert task["status"] == "input_required", task
    assert set(task["inputRequests"]) == {"confirm"}
