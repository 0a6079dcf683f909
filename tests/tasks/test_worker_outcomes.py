"""What a client, a listener and an operator see of a task around its worker: the "waiting
for a worker" message, the pick-up, runs that fail before the tool starts, stale
heartbeats and notifications, and the job's return value in the task backend.

Rules cite ext-tasks ``specification/2026-07-28/tasks.md`` ("tasks.md"): ``statusMessage`` is
free text for the user or model, a terminal status never changes, ``lastUpdatedAt`` moves
with every change a client can see.
"""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from django_mcp import Context
from django_mcp.exceptions import RequestCancelled
from django_mcp.listen.listener import Listener
from django_mcp.protocol.errors import InternalError, InvalidParams, MCPError
from django_mcp.protocol.subscriptions import SubscriptionFilter
from django_mcp.server import task_runner, tasking
from django_mcp.sites import MCPSite
from django_mcp.tasks import store
from django_mcp.tasks.models import MCPTask
from tests.helpers import result_of
from tests.tasks.support import get, run_worker, start, tasks_call

pytestmark = pytest.mark.django_db

WAITING = store.WAITING_FOR_WORKER


def job_outcome(task_id: str) -> tuple[str, Any]:
    """The backend's status and return value of the task's (last) job."""
    from django_tasks_db.models import DBTaskResult

    job = DBTaskResult.objects.get(pk=MCPTask.objects.get(pk=task_id).job_id)
    return job.status, job.return_value


@pytest.fixture
def notified(monkeypatch) -> list[tuple[str, str | None]]:
    """``(status, statusMessage)`` of every ``notifications/tasks`` published."""
    sent: list[tuple[str, str | None]] = []

    def publish(site: str, task_id: str, task: dict[str, Any]) -> None:
        sent.append((task["status"], task.get("statusMessage")))

    monkeypatch.setattr(tasking, "publish_task", publish)
    return sent


def moment(stamp: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(stamp)


def test_the_pick_up_moves_last_updated_at_and_a_cancelled_task_never_waits(client, mcp_site):
    """The message disappearing at pick-up is a change a client sees, so ``lastUpdatedAt``
    moves; a task cancelled before any worker took it is not "waiting" for one."""

    @mcp_site.tool(task="required")
    def quick(ctx: Context) -> str:
        return "done"

    created = start(client, "quick")
    picked = MCPTask.objects.get(pk=created["taskId"])
    MCPTask.objects.filter(pk=picked.pk).update(
        last_updated_at=picked.last_updated_at - timezone.timedelta(seconds=5)
    )
    assert store.pick_up(picked.pk)
    polled = get(client, picked.pk)
    assert "statusMessage" not in polled
    assert moment(polled["lastUpdatedAt"]) > moment(created["lastUpdatedAt"])

    cancelled = start(client, "quick")["taskId"]
    result_of(tasks_call(client, "tasks/cancel", cancelled))
    assert "statusMessage" not in get(client, cancelled)


def test_a_failed_task_says_why_in_its_status_message(client, mcp_site, notified):
    """ext-tasks ``specification/2026-07-28/tasks.md``, "Task Execution Errors": "The
    ``tasks/get`` response SHOULD include a ``statusMessage`` field with diagnostic
    information about the failure, and MUST include the ``error`` field". The message is
    the error's, not the tool's last progress report, in ``tasks/get`` and in the
    ``notifications/tasks`` that announces the failure."""

    @mcp_site.tool(task="required")
    def breaks(ctx: Context) -> str:
        ctx.report_progress(1, total=2, message="half way")
        raise InvalidParams("the archive is not there")

    task_id = start(client, "breaks")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert polled["status"] == "failed"
    assert polled["error"] == {"code": -32602, "message": "the archive is not there"}
    assert polled["statusMessage"] == "the archive is not there"
    assert notified[-1] == ("failed", "the archive is not there")


def test_stamps_on_a_whole_second_keep_their_fraction_so_they_sort_as_text(client, mcp_site):
    """ext-tasks ``tasks.md``: ``createdAt`` and ``lastUpdatedAt`` are ISO 8601 strings.
    Always six fractional digits: ``isoformat()`` wrote a whole second as "...:05Z",
    which as text sorts after the same second's "...:05.3Z"."""

    @mcp_site.tool(task="required")
    def quick(ctx: Context) -> str:
        return "done"

    task_id = start(client, "quick")["taskId"]
    whole = timezone.now().astimezone(datetime.UTC).replace(microsecond=0)
    MCPTask.objects.filter(pk=task_id).update(
        created_at=whole, last_updated_at=whole + datetime.timedelta(microseconds=300_000)
    )
    polled = get(client, task_id)
    second = whole.strftime("%Y-%m-%dT%H:%M:%S")
    assert polled["createdAt"] == f"{second}.000000Z"
    assert polled["lastUpdatedAt"] == f"{second}.300000Z"
    assert polled["createdAt"] < polled["lastUpdatedAt"]


def test_a_run_that_fails_before_the_tool_starts_fails_the_task(client, mcp_site, monkeypatch):
    """A worker took the job but could not start the tool (the tool is no longer served,
    or rebuilding its context failed): the task is ``failed`` with -32603, never left
    "waiting" for a worker that already came (no heartbeat would ever orphan it)."""

    @mcp_site.tool(task="required")
    def doomed(ctx: Context) -> str:
        return "not reached"

    @mcp_site.tool(task="required")
    def fragile(ctx: Context) -> str:
        return "not reached"

    gone = start(client, "doomed")["taskId"]
    mcp_site.unregister("doomed")
    run_worker()
    polled = get(client, gone)
    assert (polled["status"], polled["error"]["code"]) == ("failed", -32603)
    assert "no longer served" in polled["error"]["message"]
    assert polled["statusMessage"] == polled["error"]["message"]  # not "waiting"
    assert job_outcome(gone) == ("SUCCESSFUL", "failed")

    def no_context(task: MCPTask, site: MCPSite) -> Context:
        raise RuntimeError("stored _meta no longer understood")

    monkeypatch.setattr(task_runner, "context_for", no_context)
    broken = start(client, "fragile")["taskId"]
    run_worker()
    polled = get(client, broken)
    assert (polled["status"], polled["error"]["code"]) == ("failed", -32603)
    assert job_outcome(broken) == ("SUCCESSFUL", "failed")


def context_assumed(exc: Exception, context: Context) -> MCPError:
    """An ``EXCEPTION_HANDLER`` written for requests: it reads the context, always."""
    return InternalError(f"failed for {context.site.name}")  # AttributeError on None


def not_an_error(exc: Exception, context: Context | None) -> Any:
    """An ``EXCEPTION_HANDLER`` that returns what it caught instead of an ``MCPError``."""
    return exc


@pytest.mark.parametrize(
    ("handler", "logged"),
    [("context_assumed", "EXCEPTION_HANDLER failed"), ("not_an_error", "not an MCPError")],
)
def test_a_handler_that_fails_without_a_context_still_fails_the_task(
    client, mcp_site, monkeypatch, settings, caplog, handler, logged
):
    """A run that failed before it had a context reaches ``EXCEPTION_HANDLER`` with
    ``context=None``; a handler that cannot take that (or returns no ``MCPError``) fails
    the task with -32603, logged, instead of leaving it ``working`` with no worker until
    its heartbeat goes stale."""

    @mcp_site.tool(task="required")
    def contextless(ctx: Context) -> str:
        return "not reached"

    def no_context(task: MCPTask, site: MCPSite) -> Context:
        raise RuntimeError("stored _meta no longer understood")

    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "EXCEPTION_HANDLER": f"tests.tasks.test_worker_outcomes.{handler}",
    }
    monkeypatch.setattr(task_runner, "context_for", no_context)
    task_id = start(client, "contextless")["taskId"]
    run_worker()

    polled = get(client, task_id)
    assert (polled["status"], polled["error"]["code"]) == ("failed", -32603)
    assert job_outcome(task_id) == ("SUCCESSFUL", "failed")
    assert logged in caplog.text


def test_an_answer_clears_the_last_runs_message_and_repeats_are_not_announced(
    client, mcp_site, notified
):
    """After ``tasks/update`` the next run starts the tool from the top, so the last run's
    message is stale: the client sees "waiting", then nothing until the tool reports
    again. The same message twice is one change, announced once."""

    @mcp_site.tool(task="required")
    def two_phase(ctx: Context) -> str:
        ctx.report_progress(1, total=3, message="Scanning files")
        ctx.report_progress(1, total=3, message="Scanning files")
        ok = ctx.elicit("Delete 40 files?", {"ok": bool}, key="ok").accepted
        ctx.report_progress(2, total=3, message="Deleting files")
        return str(ok)

    task_id = start(client, "two_phase")["taskId"]
    run_worker()
    answer = {"ok": {"action": "accept", "content": {"ok": True}}}
    result_of(tasks_call(client, "tasks/update", task_id, inputResponses=answer))
    assert get(client, task_id)["statusMessage"] == WAITING
    run_worker()
    assert notified == [
        ("working", None),  # picked up
        ("working", "Scanning files"),  # once, though reported twice
        ("input_required", "Scanning files"),
        ("working", WAITING),  # answered: queued again
        ("working", None),  # picked up: the old message is gone
        ("working", "Scanning files"),
        ("working", "Deleting files"),
        ("completed", "Deleting files"),
    ]


def test_a_late_heartbeat_of_the_last_run_does_not_pick_up_the_queued_task(client, mcp_site):
    """The run that asked for input may tick once more after ``tasks/update`` queued the
    task again: that beat must not make the task look picked up (its message would go,
    and a busy pool would later have it failed as orphaned)."""

    @mcp_site.tool(task="required")
    def asks(ctx: Context) -> str:
        return str(ctx.elicit("Sure?", {"sure": bool}, key="sure").accepted)

    task_id = start(client, "asks")["taskId"]
    run_worker()
    assert store.answer(task_id, {"sure": {"action": "accept", "content": {"sure": True}}})
    assert not store.beat(task_id)
    assert MCPTask.objects.get(pk=task_id).heartbeat_at is None
    assert get(client, task_id)["statusMessage"] == WAITING


def test_a_task_failed_as_orphaned_is_announced(client, notified):
    """A poll that finds the worker gone fails the task: listeners are told, as of every
    other change of status."""
    task_id = start(client, "slow_compute", {"seconds": 60, "label": "x"})["taskId"]
    long_ago = timezone.now() - timezone.timedelta(hours=1)
    MCPTask.objects.filter(pk=task_id).update(heartbeat_at=long_ago)
    assert get(client, task_id)["status"] == "failed"
    assert notified == [("failed", store.WORKER_LOST)]


def test_a_listener_sends_nothing_of_a_task_after_its_terminal_state():
    """A worker that read the row before a ``tasks/cancel`` may publish after it: the
    stream drops that stale ``working`` rather than show a terminal state being left."""
    listener = Listener(MCPSite("ordering"), "listen-1", SubscriptionFilter(task_ids=("t1",)))

    def frame(status: str) -> bytes | None:
        event = {"method": "notifications/tasks", "uri": "t1", "task": {"status": status}}
        return asyncio.run(listener.render(event))

    assert frame("working") is not None
    assert frame("cancelled") is not None
    assert frame("working") is None
    assert frame("cancelled") is None


@pytest.mark.parametrize(
    ("body", "returned"),
    [
        ("purge", "deleted"),  # mcp_purge_tasks while it ran
        ("fail_then_stop", "failed"),  # failed meanwhile, then the tool saw a cancellation
    ],
)
def test_the_job_returns_the_tasks_real_status(client, mcp_site, body, returned):
    """The job's return value is the task's status after the run, whatever ended it."""

    def ends_oddly(ctx: Context) -> str:
        if body == "purge":
            MCPTask.objects.filter(pk=ctx.task.id).delete()
            return "done"
        store.fail(ctx.task.id, {"code": -32603, "message": store.WORKER_LOST})
        raise RequestCancelled()

    # A name per case: a worker finds the tool by site name among every site still alive.
    mcp_site.tool(name=f"ends_{body}", task="required")(ends_oddly)
    task_id = start(client, f"ends_{body}")["taskId"]
    job_id = MCPTask.objects.get(pk=task_id).job_id
    run_worker()
    from django_tasks_db.models import DBTaskResult

    job = DBTaskResult.objects.get(pk=job_id)
    assert (job.status, job.return_value) == ("SUCCESSFUL", returned)


def test_a_failed_announcement_does_not_fail_the_job(client, mcp_site, monkeypatch):
    """The outcome is committed before it is announced: a failure to announce it (the
    database gone for the re-read) is logged, and the job still reports the outcome."""

    def unreachable(*args: Any) -> None:
        raise ConnectionError("channel layer unreachable")

    monkeypatch.setattr(tasking, "publish_task", unreachable)

    @mcp_site.tool(task="required")
    def fine(ctx: Context) -> str:
        return "ok"

    task_id = start(client, "fine")["taskId"]
    run_worker()
    assert job_outcome(task_id) == ("SUCCESSFUL", "completed")
    assert get(client, task_id)["status"] == "completed"


@pytest.mark.django_db(transaction=True)
def test_with_a_backend_that_runs_at_once_the_create_result_is_current(client, settings):
    """``ImmediateBackend`` (the testing guide's) runs the job when the row commits, so
    the ``CreateTaskResult`` shows the task as it is then, not "waiting for a worker"."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    created = start(client, "slow_compute", {"seconds": 0, "label": "x"})
    assert created["status"] == "completed"
    assert created.get("statusMessage") != WAITING


def test_the_admin_shows_the_message_clients_see(admin_client, client):
    """The stored ``status_message`` is the tool's; the admin shows what ``tasks/get``
    shows, "waiting for a worker" included, in the list and on the task's page."""
    task_id = start(client, "slow_compute", {"seconds": 0, "label": "x"})["taskId"]
    listing = admin_client.get(reverse("admin:django_mcp_mcptask_changelist"))
    page = admin_client.get(reverse("admin:django_mcp_mcptask_change", args=[task_id]))
    assert WAITING in listing.content.decode()
    assert WAITING in page.content.decode()
