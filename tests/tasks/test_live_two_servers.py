"""Two server processes and one worker serving the same tasks: Daphne A and B and one
``manage.py db_worker`` on one SQLite file (:mod:`tests.tasks.livetasks`).

ext-tasks ``specification/2026-07-28/tasks.md``: the task id is all a request needs ("Task
Polling", "Task Update Requests", "Task Cancellation"), and creation is durable: once the
``CreateTaskResult`` is sent, ``tasks/get`` finds the task ("Task Creation"), here from
the other process. docs/guides/tasks.md, "Scaling out".
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING

import pytest

from tests.live import live_server
from tests.tasks.livetasks import SETTINGS, TasksClient, live_tasks, worker

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.live


def test_a_task_created_on_one_server_is_polled_answered_and_cancelled_on_the_other(
    tmp_path: Path,
):
    """``confirm_delete``: created through A, found at once and polled through B until
    ``input_required``, answered through B (``tasks/update``), completed as seen from A.
    ``gated_work``: created through A, seen started through B, cancelled through A: B
    shows ``cancelled`` and the worker, free again, runs the next task."""
    env = live_tasks(tmp_path)
    client = TasksClient()
    with ExitStack() as stack:
        a = stack.enter_context(live_server(SETTINGS, tmp_path, env=env))
        b = stack.enter_context(live_server(SETTINGS, tmp_path, env=env))
        one = stack.enter_context(worker(tmp_path, env))

        task_id = client.start(a, "confirm_delete", {"filename": "a.txt"})
        assert client.get(b, task_id)["taskId"] == task_id  # durable across processes
        asking = client.until(
            b,
            task_id,
            lambda task: task["status"] == "input_required",
            what="input_required",
            logs=one.output,
        )
        [key] = asking["inputRequests"]
        assert asking["inputRequests"][key]["method"] == "elicitation/create"
        answer = {key: {"action": "accept", "content": {"confirm": True}}}
        ack = client.result(b, "tasks/update", {"taskId": task_id, "inputResponses": answer})
        assert ack["resultType"] == "complete"
        done = client.until(
            a,
            task_id,
            lambda task: task["status"] == "completed",
            what="completed",
            logs=one.output,
        )
        assert done["result"]["content"][0]["text"] == "Deleted a.txt"
        assert client.get(b, task_id)["result"] == done["result"]

        held = client.start(a, "gated_work", {"gate": "never"})
        client.until(
            b,
            held,
            lambda task: task.get("statusMessage") == "started",
            what="started",
            logs=one.output,
        )
        ack = client.result(a, "tasks/cancel", {"taskId": held})
        assert ack["resultType"] == "complete"
        assert client.get(b, held)["status"] == "cancelled"

        (tmp_path / "gates" / "open").touch()
        after = client.start(b, "gated_work", {"gate": "open"})
        client.until(
            a,
            after,
            lambda task: task["status"] == "completed",
            what="completed by the same worker",
            logs=one.output,
        )
        assert client.get(a, held)["status"] == "cancelled"
