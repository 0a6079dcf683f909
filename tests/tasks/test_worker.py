"""What happens in the worker and around it: cancellation seen by a running tool, a worker
that dies mid-task, TTL expiry and purge, notifications, and listening for tasks.

Rules cite ext-tasks ``specification/2026-07-28/tasks.md`` ("tasks.md") and
``basic/patterns/subscriptions.mdx``.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_mcp import Context
from django_mcp.protocol.subscriptions import SubscriptionFilter
from django_mcp.server import tasking
from django_mcp.server.task_runner import context_for
from django_mcp.tasks import store
from django_mcp.tasks.models import MCPTask
from tests.commands import command_output
from tests.helpers import assert_error, mcp_post, override_mcp, result_of
from tests.tasks.support import get, run_worker, start, tasks_call

pytestmark = pytest.mark.django_db


@pytest.fixture
def task_site(mcp_site):
    """A fresh site with tools that exercise the worker."""
    seen: list[str] = []

    @mcp_site.tool(task="required")
    def cancelled_midway(ctx: Context) -> str:
        store.cancel(ctx.task.id)  # as a tasks/cancel from the client would, meanwhile
        seen.append("before")
        ctx.check_cancelled()
        seen.append("after")
        return "not reached"

    @mcp_site.tool(task="required")
    def reports(ctx: Context) -> str:
        ctx.report_progress(1, total=2, message="half way")
        return str(ctx.principal)

    @mcp_site.tool(task="required")
    def reports_nonsense(ctx: Context) -> str:
        try:
            ctx.report_progress(float("nan"), message="never stored")
        except ValueError as exc:
            ctx.report_progress(1, message="after the refusal")
            return str(exc)
        return "accepted"

    @mcp_site.tool(task="required")
    def reports_every_row(ctx: Context) -> str:
        for row in range(500):
            ctx.report_progress(row, total=500, message=f"row {row}")
        return "done"

    mcp_site.seen = seen
    return mcp_site


def test_check_cancelled_in_the_worker_sees_tasks_cancel(client, task_site):
    """tasks.md, "Task Cancellation": cooperative; the tool stops at its next check and
    the task stays ``cancelled`` (a late outcome never overwrites it)."""
    task_id = start(client, "cancelled_midway")["taskId"]
    run_worker()
    assert task_site.seen == ["before"]
    assert get(client, task_id)["status"] == "cancelled"


def test_progress_messages_become_the_status_message(client, task_site):
    """tasks.md: ``statusMessage`` may describe progress; the principal is the creator."""
    task_id = start(client, "reports")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert polled["statusMessage"] == "half way"
    assert polled["result"]["content"][0]["text"] == "anonymous"


def test_a_task_reporting_every_row_stores_few_messages_and_ends_with_its_last(client, task_site):
    """basic/patterns/progress.mdx: "Both parties SHOULD implement rate limiting to prevent
    flooding". A task's progress message is a database write and an announcement; a tool
    reporting each of 500 rows made 500 of each. Paced (``PROGRESS_INTERVAL``), the first
    is stored, the rest held, and the newest stored when the tool returns: its
    ``statusMessage`` is the tool's last word."""
    task_id = start(client, "reports_every_row")["taskId"]
    with override_mcp(PROGRESS_INTERVAL=60), CaptureQueriesContext(connection) as queries:
        run_worker()
    writes = [q["sql"] for q in queries.captured_queries if "status_message" in q["sql"]]
    writes = [sql for sql in writes if sql.lstrip().upper().startswith("UPDATE")]

    polled = get(client, task_id)
    assert polled["statusMessage"] == "row 499"
    assert polled["result"]["content"][0]["text"] == "done"
    assert len(writes) <= 3, writes


def test_the_heartbeat_stores_a_held_message_while_the_tool_still_works(
    client, mcp_site, monkeypatch
):
    """tasks.md: ``statusMessage`` describes the task's progress. A message held by the
    pacer used to wait for the tool's next report or its end: "a" then "b" a moment apart,
    then long work, and the task said "a" throughout. Each heartbeat stores the held one."""
    stored: list[str] = []
    seen_while_working: list[str] = []
    monkeypatch.setattr(store, "beat", lambda task_id: True)
    monkeypatch.setattr(store, "set_message", lambda task_id, text: stored.append(text) or False)

    @mcp_site.tool(task="required")
    def works_on(ctx: Context) -> str:
        ctx.report_progress(1, message="a")
        ctx.report_progress(2, message="b")  # held
        deadline = time.monotonic() + 3
        while "b" not in stored and time.monotonic() < deadline:
            time.sleep(0.01)
        seen_while_working.extend(stored)
        return "done"

    start(client, "works_on")
    with override_mcp(PROGRESS_INTERVAL=60, TASK_HEARTBEAT_SECONDS=0.05):
        run_worker()

    assert seen_while_working == ["a", "b"]
    assert stored == ["a", "b"]  # stored once: nothing held is left for the end


def test_progress_a_notification_cannot_carry_raises_in_a_task_too(client, task_site):
    """basic/patterns/progress.mdx: ``progress`` is a number; a task's report is checked as
    a request's is (NaN raises in the tool), and its message is not stored."""
    task_id = start(client, "reports_nonsense")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert polled["statusMessage"] == "after the refusal"
    assert polled["result"]["content"][0]["text"] == (
        "report_progress: progress must be finite, not nan"
    )


def test_a_task_stored_with_null_meta_keys_still_runs(client, task_site):
    """Admission now refuses a ``_meta`` key sent as null (schema.json RequestMetaObject
    admits no null); an earlier release took it for absent and stored it so. The worker
    rebuilds the creating call's context from what was admitted, so such a task still
    runs, rather than failing -32602 in the worker after an upgrade."""
    task_id = start(client, "reports")["taskId"]
    task = MCPTask.objects.get(pk=task_id)
    task.request_meta = {
        **task.request_meta,
        "progressToken": None,
        "io.modelcontextprotocol/logLevel": None,
        "io.modelcontextprotocol/clientInfo": None,
    }
    task.save(update_fields=["request_meta"])
    run_worker()
    polled = get(client, task_id)
    assert polled["status"] == "completed"
    assert polled["result"]["content"][0]["text"] == "anonymous"


def test_a_task_whose_worker_died_fails_with_a_clear_error(client, settings):
    """tasks.md: a task never stays ``working`` forever. A worker that started the task
    and stopped heart-beating (killed) leaves it orphaned: the next poll fails it."""
    task_id = start(client, "slow_compute", {"seconds": 60, "label": "x"})["taskId"]
    long_ago = timezone.now() - timedelta(seconds=3600)
    MCPTask.objects.filter(pk=task_id).update(heartbeat_at=long_ago)
    polled = get(client, task_id)
    assert polled["status"] == "failed"
    assert polled["error"]["code"] == -32603
    assert "worker" in polled["error"]["message"]


def test_an_orphaned_task_purged_while_it_is_failed_is_unknown(client, monkeypatch):
    """tasks.md, "Protocol Errors": a task that is gone is -32602 "Task not found". One
    purged between failing it as orphaned and reading it back was -32603 (DoesNotExist)."""
    task_id = start(client, "slow_compute", {"seconds": 60, "label": "x"})["taskId"]
    long_ago = timezone.now() - timedelta(seconds=3600)
    MCPTask.objects.filter(pk=task_id).update(heartbeat_at=long_ago)
    failing = store.fail

    def fail_then_purge(failed_id: str, error: dict) -> bool:
        changed = failing(failed_id, error)
        MCPTask.objects.filter(pk=failed_id).delete()  # mcp_purge_tasks, meanwhile
        return changed

    monkeypatch.setattr(store, "fail", fail_then_purge)
    error = tasks_call(client, "tasks/get", task_id).json()["error"]
    assert (error["code"], error["message"]) == (-32602, "Task not found")


def test_a_queued_task_without_a_worker_yet_is_not_orphaned(client):
    """Waiting for a worker is not dying: a task no worker has started stays ``working``."""
    task_id = start(client, "slow_compute", {"seconds": 1, "label": "x"})["taskId"]
    MCPTask.objects.filter(pk=task_id).update(created_at=timezone.now() - timedelta(days=1))
    assert get(client, task_id)["status"] == "working"


def test_a_task_no_worker_runs_yet_says_so_in_its_status_message(client):
    """tasks.md: ``statusMessage`` is free text for the user or model. A ``working`` task
    that no worker has picked up says it is waiting (queued, or queued again after its last
    answer), so a client can tell a stalled queue from a slow tool; once a worker runs it,
    the tool's own message (or none) is shown."""
    created = start(client, "confirm_delete", {"filename": "a.txt"})
    task_id = created["taskId"]
    assert created["statusMessage"] == store.WAITING_FOR_WORKER
    assert get(client, task_id)["statusMessage"] == store.WAITING_FOR_WORKER
    MCPTask.objects.filter(pk=task_id).update(heartbeat_at=timezone.now())  # a worker took it
    assert "statusMessage" not in get(client, task_id)
    MCPTask.objects.filter(pk=task_id).update(heartbeat_at=None)
    run_worker()
    assert "statusMessage" not in get(client, task_id)  # input_required: nobody to wait for
    answer = {"confirm_delete": {"action": "accept", "content": {"confirm": True}}}
    result_of(tasks_call(client, "tasks/update", task_id, inputResponses=answer))
    assert get(client, task_id)["statusMessage"] == store.WAITING_FOR_WORKER  # queued again
    run_worker()
    assert "statusMessage" not in get(client, task_id)  # completed


def test_the_job_returns_the_status_the_task_ended_in(client, task_site):
    """The task backend lists every job that returns as successful, a cancelled task's too
    (the tool stopped when asked, so the job returned). Its return value is the MCP status,
    so the backend's admin and logs tell a cancelled or failed task from a completed one."""
    from django_tasks_db.models import DBTaskResult

    @task_site.tool(task="required")
    def asks(ctx: Context) -> str:
        return str(ctx.elicit("Sure?", {"sure": bool}, key="sure").accepted)

    @task_site.tool(task="required")
    def fails(ctx: Context) -> str:
        raise RuntimeError("boom")

    names = ["cancelled_midway", "reports", "asks", "fails", "reports"]
    task_ids = [start(client, name)["taskId"] for name in names]
    result_of(tasks_call(client, "tasks/cancel", task_ids[-1]))  # before any worker ran it
    run_worker()
    returned = [
        DBTaskResult.objects.get(pk=MCPTask.objects.get(pk=task_id).job_id).return_value
        for task_id in task_ids
    ]
    assert returned == ["cancelled", "completed", "input_required", "failed", "not run"]


def test_an_expired_task_is_32602_and_purged(client):
    """tasks.md, "Task Polling": after ``ttlMs`` the server may delete the task; an
    expired id is -32602 ("Task has expired"); ``mcp_purge_tasks`` deletes the row."""
    task_id = start(client, "slow_compute", {"seconds": 1, "label": "x"})["taskId"]
    kept = start(client, "slow_compute", {"seconds": 1, "label": "y"})["taskId"]
    MCPTask.objects.filter(pk=task_id).update(expires_at=timezone.now() - timedelta(seconds=1))
    error = tasks_call(client, "tasks/get", task_id).json()["error"]
    assert (error["code"], error["message"]) == (-32602, "Task has expired")
    assert "1 expired" in command_output("mcp_purge_tasks", "--dry-run")
    assert "Deleted 1" in command_output("mcp_purge_tasks")
    assert list(MCPTask.objects.values_list("pk", flat=True)) == [kept]


def test_listen_leaves_out_a_task_whose_ttl_has_passed(client):
    """tasks.md, "Task Polling": after ``ttlMs`` the task is gone for the client
    (``tasks/get`` says "Task has expired"), so a listen stream neither acknowledges nor
    follows it; a purge would delete it under the stream anyway."""
    from django_mcp import site

    expired = start(client, "slow_compute", {"seconds": 1, "label": "x"})["taskId"]
    live = start(client, "slow_compute", {"seconds": 1, "label": "y"})["taskId"]
    MCPTask.objects.filter(pk=expired).update(expires_at=timezone.now() - timedelta(seconds=1))
    MCPTask.objects.filter(pk=live).update(expires_at=timezone.now() + timedelta(hours=1))
    context = context_for(MCPTask.objects.get(pk=live), site)
    honoured = tasking.listen_filter(site, SubscriptionFilter(task_ids=(expired, live)), context)
    assert honoured.task_ids == (live,)
    assert not honoured.wants("notifications/tasks", expired)


def test_every_status_change_is_published_with_the_detailed_task(client, monkeypatch):
    """tasks.md, "Task Status Notifications": ``notifications/tasks`` carries the task as
    ``tasks/get`` would return it, so the terminal one inlines the result."""
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(tasking, "publish_task", lambda site, tid, task: sent.append((tid, task)))
    task_id = start(client, "confirm_delete", {"filename": "a.txt"})["taskId"]
    run_worker()
    answer = {"confirm_delete": {"action": "accept", "content": {"confirm": True}}}
    result_of(tasks_call(client, "tasks/update", task_id, inputResponses=answer))
    run_worker()
    statuses = [(task["status"], task.get("statusMessage")) for tid, task in sent if tid == task_id]
    waiting = store.WAITING_FOR_WORKER
    assert statuses == [
        ("working", None),  # a worker picked it up
        ("input_required", None),
        ("working", waiting),  # answered: queued again
        ("working", None),
        ("completed", None),
    ]
    assert sent[-1][1]["result"]["content"][0]["text"] == "Deleted a.txt"


def test_listen_for_task_ids_needs_the_extension(client):
    """tasks.md, "Task Status Notifications": ``taskIds`` without the extension: -32021."""
    params = {"notifications": {"taskIds": ["abc"]}}
    error = assert_error(mcp_post(client, "subscriptions/listen", params), 400, -32021)
    assert "extensions" in error["data"]["requiredCapabilities"]


def test_listen_keeps_only_the_callers_own_tasks(client, rf):
    """basic/patterns/subscriptions.mdx: never send what the client may not see; the
    acknowledgement lists only the caller's own task ids."""
    mine = start(client, "slow_compute", {"seconds": 1, "label": "x"})["taskId"]
    theirs = store.create(
        site="default", owner="user:999", tool="greet", arguments={}, request_meta={}, ttl_ms=None
    ).id
    task = MCPTask.objects.get(pk=mine)
    from django_mcp import site

    context = context_for(task, site)
    wanted = SubscriptionFilter(task_ids=(mine, theirs, "nope"))
    honoured = tasking.listen_filter(site, wanted, context)
    assert honoured.task_ids == (mine,)
    assert honoured.wants("notifications/tasks", mine)
    assert not honoured.wants("notifications/tasks", theirs)
