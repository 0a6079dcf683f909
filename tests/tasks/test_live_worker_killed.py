"""A worker killed mid-task, for real: Daphne plus ``manage.py db_worker`` processes on one
SQLite file (:mod:`tests.tasks.livetasks`).

ext-tasks ``specification/2026-07-28/tasks.md``: a task ends ``completed``, ``failed`` or
``cancelled`` and terminal states never change ("Task Status"); a JSON-RPC-level failure
while the task runs is ``failed`` with a JSON-RPC ``error`` ("Task Execution Errors").
docs/guides/tasks.md, "When a worker dies": the heartbeat stops, and the first
``tasks/get`` after ``TASK_WORKER_TIMEOUT`` fails the task with -32603; the database
worker does not run the job again.
"""

from __future__ import annotations

import signal
from contextlib import ExitStack
from typing import TYPE_CHECKING

import pytest

from django_mcp.tasks.store import WORKER_LOST
from tests.live import live_server
from tests.tasks.livetasks import SETTINGS, TasksClient, live_tasks, worker

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.live


def test_a_task_whose_worker_is_killed_fails_and_is_not_run_again(tmp_path: Path):
    """The worker is SIGKILLed while the task is ``working``: after the (3 s) worker
    timeout ``tasks/get`` shows it ``failed`` with -32603 and the message saying the worker
    stopped; a new worker runs new tasks but never picks the dead one up again."""
    env = live_tasks(tmp_path, LIVE_TASKS_HEARTBEAT="0.3", LIVE_TASKS_WORKER_TIMEOUT="3")
    client = TasksClient()
    with ExitStack() as stack:
        server = stack.enter_context(live_server(SETTINGS, tmp_path, env=env))
        first = stack.enter_context(worker(tmp_path, env, "worker-1"))
        task_id = client.start(server, "gated_work", {"gate": "never"})
        running = client.until(
            server,
            task_id,
            lambda task: task.get("statusMessage") == "started",
            what="started by the worker",
            logs=first.output,
        )
        assert running["status"] == "working"

        first.process.send_signal(signal.SIGKILL)
        assert first.process.wait(timeout=10) == -signal.SIGKILL

        failed = client.until(
            server, task_id, lambda task: task["status"] != "working", what="no longer working"
        )
        assert failed["status"] == "failed"
        assert failed["error"] == {"code": -32603, "message": WORKER_LOST}
        assert "result" not in failed

        second = stack.enter_context(worker(tmp_path, env, "worker-2"))
        (tmp_path / "gates" / "open").touch()
        later = client.start(server, "gated_work", {"gate": "open"})
        done = client.until(
            server,
            later,
            lambda task: task["status"] == "completed",
            what="completed by the new worker",
            logs=second.output,
        )
        assert done["result"]["content"][0]["text"] == "open opened"
        # The new worker has been polling the queue all along: the dead task stays failed.
        assert client.get(server, task_id) == failed
