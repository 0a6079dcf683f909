"""A task whose TTL passes before or while a worker runs it.

ext-tasks ``specification/draft/tasks.md``, "Task Polling": once ``createdAt`` plus
``ttlMs`` has passed, a client MAY consider the task no longer usable, and a server MAY
mark it ``failed`` and delete it. Here an expired task answers -32602 "Task has expired"
to ``tasks/get`` and ``tasks/cancel`` alike, so its client can neither see nor stop it: a
worker must not start the tool's work then (a client that gave up and called again got it
twice).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from django_mcp import Context
from django_mcp.tasks import store
from django_mcp.tasks.models import MCPTask
from tests.helpers import result_of
from tests.tasks.support import run_worker, start, tasks_call

pytestmark = pytest.mark.django_db


def expire(task_id: str) -> None:
    MCPTask.objects.filter(pk=task_id).update(expires_at=timezone.now() - timedelta(seconds=1))


@pytest.mark.parametrize("when", ["queued", "resumed"])
def test_a_worker_does_not_start_a_task_whose_ttl_has_passed(client, mcp_site, when):
    """Workers busy (or down) past the TTL, of a new task or of one an answer queued again
    (``tasks/update``): the tool did its work once the client was told the task expired
    and could not cancel it. The task fails instead, saying why."""
    ran: list[str] = []

    @mcp_site.tool(task="required")
    def send_invoice(ctx: Context) -> str:
        ran.append("run")
        if when == "resumed":
            ctx.elicit("Send it?", {})
        return "sent"

    task_id = start(client, "send_invoice")["taskId"]
    if when == "resumed":
        run_worker()
        answer = {"elicitation": {"action": "accept", "content": {}}}
        result_of(tasks_call(client, "tasks/update", task_id, inputResponses=answer))
        ran.clear()
    expire(task_id)

    run_worker()

    assert ran == []
    task = MCPTask.objects.get(pk=task_id)
    assert task.status == "failed"
    assert task.error == {"code": -32603, "message": store.EXPIRED}
