"""The official MCP Python SDK client (``mcp`` 2.3) drives tasks on the live testproject.

The SDK does not implement the Tasks extension, so the test declares it the SDK's way
(a ``ClientExtension`` claiming ``resultType: "task"`` on ``tools/call``, which puts
``extensions["io.modelcontextprotocol/tasks"]`` into every request's
``_meta["io.modelcontextprotocol/clientCapabilities"]``) and sends ``tasks/get``,
``tasks/update`` and ``tasks/cancel`` as raw requests through the SDK session and its
streamable HTTP transport (``Mcp-Name`` mirrors ``taskId``).

ext-tasks ``specification/2026-07-28/tasks.md``: "Capability Negotiation", "Task Creation",
"Task Polling", "Task Update Requests", "Task Cancellation".
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Literal

import anyio
import mcp_types as types
import pytest
from mcp.client.extension import ClientExtension, ResultClaim
from pydantic import ConfigDict

from tests.live import live_server
from tests.sdk import run_sdk_client
from tests.tasks.livetasks import SETTINGS, WAIT_SECONDS, live_tasks, worker

if TYPE_CHECKING:
    from pathlib import Path

    from mcp import Client

pytestmark = pytest.mark.live

EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = ("completed", "failed", "cancelled")
CLIENT = types.Implementation(name="django-mcp-tasks-interop", version="1.0")


class CreatedTask(types.Result):
    """``CreateTaskResult``: the flat task with ``resultType: "task"``."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str


class TaskResult(types.Result):
    """What ``tasks/get`` (the detailed task) or an ack returns; every field kept."""

    model_config = ConfigDict(extra="allow")
    result_type: str


class TaskRequest(types.Request[dict[str, Any], str]):
    """A ``tasks/*`` request, raw: the SDK has no types for the extension."""

    name_param = "taskId"


async def _unresolved(result: CreatedTask, ctx: Any) -> types.CallToolResult:
    raise AssertionError("the test handles tasks itself (allow_claimed=True)")


class Tasks(ClientExtension):
    """Declares the extension; the test drives each task by hand."""

    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=_unresolved)]


async def send(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = await client.session.send_request(
        TaskRequest(method=method, params=params), TaskResult
    )
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def create(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    created = await client.session.call_tool(tool, arguments, allow_claimed=True)
    assert isinstance(created, CreatedTask), created
    assert created.status == "working"
    return created.task_id


async def until(client: Client, task_id: str, status: str) -> dict[str, Any]:
    """Poll ``tasks/get`` at ``pollIntervalMs`` until ``status`` (bounded)."""
    with anyio.fail_after(WAIT_SECONDS):
        while (task := await send(client, "tasks/get", {"taskId": task_id}))["status"] != status:
            assert task["status"] not in TERMINAL, task
            await anyio.sleep(task.get("pollIntervalMs", 100) / 1000)
    return task


async def no_elicitation(context: Any, params: Any) -> types.ElicitResult:
    """Declares the elicitation capability; a task asks through ``tasks/get`` instead."""
    raise AssertionError("the server sent an elicitation request outside the task")


def test_the_sdk_client_creates_polls_answers_and_cancels_tasks(tmp_path: Path):
    """Through the SDK: ``confirm_delete`` becomes a task, is polled to ``input_required``,
    answered with ``tasks/update`` and completes; ``gated_work`` is cancelled with
    ``tasks/cancel`` (empty ack) and stays ``cancelled``. Declaring the extension is what
    makes a task: the same SDK client without it gets -32021 for a task-only tool."""
    env = live_tasks(tmp_path)

    async def body(client: Client) -> dict[str, Any]:
        await client.list_tools()
        asked = await create(client, "confirm_delete", {"filename": "b.txt"})
        waiting = await until(client, asked, "input_required")
        [key] = waiting["inputRequests"]
        answer = {key: {"action": "accept", "content": {"confirm": True}}}
        ack = await send(client, "tasks/update", {"taskId": asked, "inputResponses": answer})
        done = await until(client, asked, "completed")

        held = await create(client, "gated_work", {"gate": "never"})
        cancel_ack = await send(client, "tasks/cancel", {"taskId": held})
        cancelled = await send(client, "tasks/get", {"taskId": held})
        return {
            "waiting": waiting["inputRequests"][key]["method"],
            "update_ack": ack,
            "done": done["result"]["content"][0]["text"],
            "cancel_ack": cancel_ack,
            "cancelled": cancelled["status"],
        }

    async def undeclared(client: Client) -> int:
        with pytest.raises(Exception) as raised:  # noqa: PT011 - the SDK's MCPError
            await client.call_tool("confirm_delete", {"filename": "c.txt"})
        return int(raised.value.error.code)  # type: ignore[attr-defined]

    with ExitStack() as stack:
        server = stack.enter_context(live_server(SETTINGS, tmp_path, env=env))
        stack.enter_context(worker(tmp_path, env))
        seen = run_sdk_client(
            server.url(),
            body,
            client_info=CLIENT,
            read_timeout_seconds=10,
            deadline=60,
            extensions=[Tasks()],
            elicitation_callback=no_elicitation,
        )
        code = run_sdk_client(
            server.url(), undeclared, client_info=CLIENT, read_timeout_seconds=10, deadline=30
        )

    assert seen == {
        "waiting": "elicitation/create",
        "update_ack": {"resultType": "complete", "_meta": seen["update_ack"].get("_meta")},
        "done": "Deleted b.txt",
        "cancel_ack": {"resultType": "complete", "_meta": seen["cancel_ack"].get("_meta")},
        "cancelled": "cancelled",
    }
    assert code == -32021
