"""Helpers of the tasks tests: requests that declare the Tasks extension, and a worker run
in the test process (``manage.py db_worker --batch``) that drains the queue once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from unittest.mock import patch

from tests.commands import command_output
from tests.helpers import call_tool, mcp_post, request_meta, result_of

if TYPE_CHECKING:
    from django.http import HttpResponse
    from django.test import Client

EXTENSION = "io.modelcontextprotocol/tasks"
#: What the conformance suite's tasks client declares.
DECLARING = {"extensions": {EXTENSION: {}}, "elicitation": {}, "sampling": {}}


def declaring(**extra: Any) -> dict[str, Any]:
    return request_meta(capabilities=DECLARING, **extra)


def start(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """``tools/call`` from a declaring client; the ``CreateTaskResult``."""
    result = result_of(call_tool(client, tool, arguments or {}, meta=declaring()))
    assert result["resultType"] == "task", result
    return result


def tasks_call(
    client: Client,
    method: str,
    task_id: str,
    *,
    meta: Any = None,
    headers: dict[str, Any] | None = None,
    **params: Any,
) -> HttpResponse:
    """``tasks/get|update|cancel`` (``Mcp-Name`` mirrors the id), declaring by default."""
    body = {"taskId": task_id, **params}
    meta = declaring() if meta is None else meta
    return mcp_post(client, method, body, meta=meta, headers=headers)


def get(client: Client, task_id: str) -> dict[str, Any]:
    return result_of(tasks_call(client, "tasks/get", task_id))


def _keep_connection() -> None:
    """Instead of ``close_old_connections``: the test's transaction holds the connection
    (Django's test client disconnects it from the request signals for the same reason)."""


def run_worker() -> str:
    """Run every queued job once, in this process, as ``db_worker`` does; its log."""
    with (
        patch(
            "django_tasks_db.management.commands.db_worker.close_old_connections", _keep_connection
        ),
        patch("django_mcp.server.task_runner.close_old_connections", _keep_connection),
    ):
        return command_output("db_worker", "--batch", "--interval", "0", "--no-startup-delay")
