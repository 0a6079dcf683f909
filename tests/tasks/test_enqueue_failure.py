"""A task whose job could not be queued is failed at once, not left waiting for a worker.

With a task backend other than django-tasks-db's, the job is enqueued when the task's
transaction commits (``transaction.on_commit``). A backend that refused it (a broker
down, say) answered the request -32603, but the committed row stayed ``working``,
"waiting for a worker", which no worker would ever pick up: ``tasks/get`` said so until
the TTL passed. ext-tasks ``specification/2026-07-28/tasks.md``: a poll MUST get the task's
real status ("Task Polling"), and a JSON-RPC error ends a task ``failed`` with that error
("Task Execution Errors").
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connections
from django_tasks.backends.immediate import ImmediateBackend
from django_tasks_db import DatabaseBackend

from django_mcp.tasks import store
from django_mcp.tasks.models import MCPTask
from tests.helpers import assert_error, call_tool, result_of
from tests.tasks.support import declaring, get, run_worker, start, tasks_call

pytestmark = pytest.mark.django_db(transaction=True)

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


def refuse(*args: Any, **kwargs: Any) -> Any:
    raise ConnectionError("the task broker is down")


@pytest.fixture
def refusing_backend(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that enqueues on commit, and whose ``enqueue`` raises."""
    settings.TASKS = IMMEDIATE
    monkeypatch.setattr(ImmediateBackend, "enqueue", refuse)


def assert_failed_unqueued(client: Any, task_id: str) -> None:
    polled = get(client, task_id)
    assert polled["status"] == "failed", polled
    assert polled["error"] == {"code": -32603, "message": store.NOT_QUEUED}
    assert polled["statusMessage"] == store.NOT_QUEUED  # the failure's, not "waiting"
    assert "pollIntervalMs" not in polled


@pytest.mark.parametrize("atomic_requests", [False, True])
def test_a_task_whose_job_was_refused_is_failed(
    client: Any, refusing_backend: None, monkeypatch: pytest.MonkeyPatch, atomic_requests: bool
) -> None:
    """The call answers -32603, and the row it committed is ``failed`` with that error.
    With ``ATOMIC_REQUESTS`` the job is enqueued when the view's transaction commits,
    after the handler answered, and the failure comes out of the view, as Django reports
    one (so the test client must not re-raise it): the same."""
    if atomic_requests:
        monkeypatch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", True)
        client.raise_request_exception = False
    response = call_tool(client, "slow_compute", {"seconds": 0, "label": "x"}, meta=declaring())
    assert_error(response, 200, -32603)
    (task,) = MCPTask.objects.all()
    assert_failed_unqueued(client, task.id)


def test_a_resumed_task_whose_job_was_refused_is_failed(
    client: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last answer of ``tasks/update`` queues the task again: refused, the update
    answers -32603 and the task, whose id the client holds, polls ``failed`` at once."""
    settings.TASKS = IMMEDIATE  # runs the job on commit: the task asks at once
    task_id = start(client, "multi_input")["taskId"]
    assert get(client, task_id)["status"] == "input_required"
    monkeypatch.setattr(ImmediateBackend, "enqueue", refuse)
    answer = {"action": "accept", "content": {"name": "n", "confirm": True}}
    answers = {"first": answer, "second": answer}
    response = tasks_call(client, "tasks/update", task_id, inputResponses=answers)
    assert_error(response, 200, -32603)
    assert_failed_unqueued(client, task_id)


def test_a_queued_job_leaves_the_task_to_its_worker(client: Any, settings: Any) -> None:
    """Only a refused job fails the task: one the backend took runs as before."""
    settings.TASKS = IMMEDIATE
    created = result_of(
        call_tool(client, "slow_compute", {"seconds": 0, "label": "x"}, meta=declaring())
    )
    assert get(client, created["taskId"])["status"] == "completed"


def test_with_the_database_backend_a_refused_job_rolls_the_task_back(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """django-tasks-db enqueues in the task's own transaction: a refusal leaves no task
    behind (the call answers -32603), and an update's answers are rolled back with it, so
    the task still asks for them rather than waiting for a worker."""
    task_id = start(client, "multi_input")["taskId"]
    run_worker()
    monkeypatch.setattr(DatabaseBackend, "enqueue", refuse)
    response = call_tool(client, "slow_compute", {"seconds": 0, "label": "x"}, meta=declaring())
    assert_error(response, 200, -32603)
    assert list(MCPTask.objects.values_list("pk", flat=True)) == [task_id]
    answer = {"action": "accept", "content": {"name": "n", "confirm": True}}
    answers = {"first": answer, "second": answer}
    response = tasks_call(client, "tasks/update", task_id, inputResponses=answers)
    assert_error(response, 200, -32603)
    polled = get(client, task_id)
    assert polled["status"] == "input_required"
    assert set(polled["inputRequests"]) == {"first", "second"}


def test_a_job_a_worker_took_before_the_backend_raised_keeps_its_task(
    client: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend can raise after it took the job (a timeout after the write, a
    ``task_enqueued`` receiver): if a worker picked the task up meanwhile, the task is its
    run's, not failed under it (the run's outcome would be dropped and the client told to
    call again, running the tool twice). The request still answers -32603."""
    settings.TASKS = IMMEDIATE

    def taken_then_refused(backend: Any, task: Any, args: Any, kwargs: Any) -> Any:
        assert store.pick_up(args[0])  # a worker's first heartbeat
        raise TimeoutError("the broker did not confirm in time")

    monkeypatch.setattr(ImmediateBackend, "enqueue", taken_then_refused)
    response = call_tool(client, "slow_compute", {"seconds": 0, "label": "x"}, meta=declaring())
    assert_error(response, 200, -32603)
    (task,) = MCPTask.objects.all()
    assert get(client, task.id)["status"] == "working"
