"""A task's run survives what would otherwise leave it ``working`` with no worker: a
heartbeat that fails once, and an outcome the database cannot keep.

ext-tasks ``specification/2026-07-28/tasks.md``: a request that completed with a result is
``completed`` and its ``result`` MUST contain it; ``failed`` is for a JSON-RPC error
("Task Execution Errors"); a poll MUST get the task's real status ("Task Polling").
"""

from __future__ import annotations

import asyncio
import threading
from decimal import Decimal

import pytest
from django.db import OperationalError
from django_tasks_db.models import DBTaskResult

from django_mcp import Context
from django_mcp.exceptions import RequestCancelled
from django_mcp.protocol.errors import InvalidParams
from django_mcp.server import task_runner
from django_mcp.tasks import store
from django_mcp.tasks.models import MCPTask
from tests.helpers import override_mcp
from tests.tasks.support import get, run_worker, start

pytestmark = pytest.mark.django_db


def test_the_heartbeat_goes_on_after_a_beat_fails(monkeypatch):
    """One transient error (a locked SQLite, a dropped connection) used to end the beats
    for the rest of the run: after TASK_WORKER_TIMEOUT the next poll failed the healthy
    task as orphaned and its result was thrown away."""
    beats: list[str] = []
    enough = threading.Event()

    def beat(task_id: str) -> bool:
        beats.append(task_id)
        if len(beats) == 1:
            raise OperationalError("database is locked")
        if len(beats) >= 3:
            enough.set()
        return True

    monkeypatch.setattr(store, "beat", beat)
    with override_mcp(TASK_HEARTBEAT_SECONDS=0.01), task_runner.Heartbeat("some-task"):
        assert enough.wait(10), f"the beats stopped after {len(beats)}"


@pytest.mark.parametrize("text", ["before\x00after", "lone \ud800 surrogate"])
def test_a_result_no_database_can_keep_fails_the_task_at_once(client, mcp_site, text):
    """PostgreSQL's ``jsonb`` refuses NUL and unpaired surrogates: writing such a result
    raised out of the run and left the task ``working`` until a poll failed it as
    orphaned, "the worker stopped", which was false. It fails now, saying why, on every
    database alike."""

    @mcp_site.tool(task="required")
    def odd_output() -> str:
        return text

    task_id = start(client, "odd_output")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert polled["status"] == "failed"
    assert polled["error"]["code"] == -32603
    assert "result could not be stored" in (polled["error"]["message"])


def test_input_requests_no_database_can_keep_fail_the_task_at_once(client, mcp_site):
    @mcp_site.tool(task="required")
    def odd_question(ctx: Context) -> str:
        return str(ctx.elicit("Sure\x00?", {"sure": bool}, key="sure").accepted)

    task_id = start(client, "odd_question")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert (polled["status"], polled["error"]["code"]) == ("failed", -32603)
    assert "input requests could not be stored" in polled["error"]["message"]


@pytest.mark.parametrize(
    "data",
    [{"amount": Decimal("1.5")}, {"s": {1, 2}}, {"nan": float("nan")}],
    ids=["decimal", "set", "nan"],
)
def test_an_error_json_cannot_encode_still_fails_the_task(client, mcp_site, data):
    """An error whose ``data`` JSON cannot encode (or SQLite's JSON check refuses) raised
    out of the run: the task stayed ``working`` until a poll called its live worker dead."""

    @mcp_site.tool(task="required")
    def odd_error() -> str:
        raise InvalidParams("no", data=data)

    task_id = start(client, "odd_error")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert (polled["status"], polled["error"]["code"]) == ("failed", -32603)
    assert "could not be stored" in polled["error"]["message"]


@pytest.mark.parametrize("stop", [SystemExit(3), KeyboardInterrupt()], ids=repr)
def test_a_tool_that_exits_fails_the_task_at_once(client, mcp_site, stop):
    """A tool calling ``sys.exit()`` (or a worker stopped by Ctrl-C mid-run) raised past
    the run's ``except Exception``: the database worker caught it and marked its job
    failed, but the task stayed ``working``, its heartbeat frozen, until a poll past
    ``TASK_WORKER_TIMEOUT`` blamed a dead worker (never, with no timeout). The worker does
    not run the job again, so the task is ``failed`` now (tasks.md, "Task Execution
    Errors": a JSON-RPC-level failure), and the exit still propagates to the worker."""

    @mcp_site.tool(task="required")
    def quitter(ctx: Context) -> str:
        raise stop

    task_id = start(client, "quitter")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert (polled["status"], polled["error"]["code"]) == ("failed", -32603)
    assert type(stop).__name__ in polled["error"]["message"]
    job = DBTaskResult.objects.get(pk=MCPTask.objects.get(pk=task_id).job_id)
    assert job.status == "FAILED"  # the worker still saw the exit


def test_a_tool_that_raises_cancelled_unasked_fails_instead_of_cancelling(client, mcp_site):
    """``cancelled`` is what ``tasks/cancel`` leads to (tasks.md, "Task Cancellation"): a
    tool whose own code raised ``CancelledError`` (an inner task cancelled under it) or
    ``RequestCancelled`` with no cancellation asked for was reported ``cancelled``, hiding
    the failure from a client that never cancelled. It fails (-32603), as any unexpected
    exception does; a real ``tasks/cancel`` still ends ``cancelled`` (test_worker.py)."""

    @mcp_site.tool(task="required")
    async def inner_cancelled(ctx: Context) -> str:
        raise asyncio.CancelledError

    @mcp_site.tool(task="required")
    def says_cancelled(ctx: Context) -> str:
        raise RequestCancelled

    for tool in ("inner_cancelled", "says_cancelled"):
        task_id = start(client, tool)["taskId"]
        run_worker()
        polled = get(client, task_id)
        assert (polled["status"], polled["error"]["code"]) == ("failed", -32603), tool


@pytest.mark.parametrize("text", ["half\x00way", "half\ud800way"], ids=["nul", "surrogate"])
def test_a_progress_message_no_database_keeps_does_not_fail_the_task(client, mcp_site, text):
    """A tool's progress message becomes the task's ``statusMessage`` (free text for the
    user, tasks.md "Task Status"): one holding NUL (which PostgreSQL's text refuses) or an
    unpaired surrogate (which no database encodes) raised from ``report_progress`` into
    the tool, failing a task whose work was fine. It is kept without them."""

    @mcp_site.tool(task="required")
    def chatty(ctx: Context) -> str:
        ctx.report_progress(1, 2, text)
        return "done"

    task_id = start(client, "chatty")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert polled["status"] == "completed", polled
    assert polled["statusMessage"] == "halfway"
