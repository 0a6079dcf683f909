"""A task whose TTL passes before or while a worker runs it.

ext-tasks ``specification/2026-07-28/tasks.md``, "Task Polling": once ``createdAt`` plus
``ttlMs`` has passed, a client MAY consider the task no longer usable, and a server MAY
mark it ``failed`` and delete it. Here an expired task answers -32602 "Task has expired"
to ``tasks/get`` and ``tasks/cancel`` alike, so its client can neither see nor stop it: a
worker must not start the tool's work then, nor go on with it (a client that gave up and
called again got it twice).
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


@pytest.mark.parametrize("ending", ["expired", "purged"])
def test_a_run_stops_at_its_next_check_once_its_ttl_passed_or_it_was_purged(
    client, mcp_site, ending
):
    """A tool running past its task's TTL, or whose row ``mcp_purge_tasks`` deleted under
    it, went on to its end: its client could no longer see or cancel it, and its outcome
    was thrown away. ``ctx.check_cancelled()`` now stops it as it stops a cancelled one;
    an expired task fails saying why, and the job of a purged one returns "deleted"."""
    steps: list[int] = []

    @mcp_site.tool(task="required")
    def long_batch(ctx: Context) -> str:
        for step in range(3):
            ctx.check_cancelled()
            steps.append(step)
            if ending == "expired":
                expire(ctx.task.id)
            else:
                MCPTask.objects.filter(pk=ctx.task.id).delete()
        return "all done"

    task_id = start(client, "long_batch")["taskId"]
    job_id = MCPTask.objects.get(pk=task_id).job_id

    run_worker()

    assert steps == [0]
    from django_tasks_db.models import DBTaskResult

    job = DBTaskResult.objects.get(pk=job_id)
    if ending == "expired":
        task = MCPTask.objects.get(pk=task_id)
        assert task.status == "failed"
        assert task.error == {"code": -32603, "message": store.EXPIRED}
        assert job.return_value == "failed"
    else:
        assert job.return_value == "deleted"
