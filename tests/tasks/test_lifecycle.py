"""The Tasks extension through the real HTTP stack, against the testproject's fixtures.

Rules cite ext-tasks ``specification/2026-07-28/tasks.md`` (the extension's normative text,
"tasks.md" below) and SEP-2663 (``seps/2663-tasks-extension.md``). Jobs run on the
database backend and are drained by ``db_worker --batch`` in the test process.
"""

from __future__ import annotations

import pytest

from django_mcp.tasks.models import MCPTask
from tests.helpers import assert_error, call_tool, mcp_post, request_meta, result_of
from tests.tasks.support import EXTENSION, declaring, get, run_worker, start, tasks_call

pytestmark = pytest.mark.django_db

ENVELOPE = ("result", "error", "inputRequests", "requestState", "task")


def test_discover_advertises_the_extension_and_not_the_legacy_capability(client):
    """tasks.md, "Capability Negotiation": ``extensions[...tasks] = {}``; never the
    2025-11-25 ``capabilities.tasks``."""
    capabilities = result_of(mcp_post(client, "server/discover"))["capabilities"]
    assert capabilities["extensions"] == {EXTENSION: {}}
    assert "tasks" not in capabilities


def test_an_optional_tool_is_synchronous_without_the_extension(client):
    """SEP-2663: never a CreateTaskResult to a request that did not declare the extension."""
    result = result_of(call_tool(client, "slow_compute", {"seconds": 0, "label": "x"}))
    assert result["resultType"] == "complete"
    assert "taskId" not in result
    assert result["content"][0]["text"] == "x: computed for 0s"
    assert not MCPTask.objects.exists()


def test_the_declaration_of_each_request_counts_not_an_earlier_one(client):
    """basic/index.mdx: a server MUST NOT rely on prior requests; a declaring call gets a
    task, the next undeclared call to the same tool does not."""
    start(client, "slow_compute", {"seconds": 1, "label": "a"})
    result = result_of(call_tool(client, "slow_compute", {"seconds": 0, "label": "b"}))
    assert result["resultType"] == "complete"


def test_a_required_task_without_the_extension_is_32021_naming_it(client):
    """tasks.md, "Protocol Errors": -32021 with ``data.requiredCapabilities``; HTTP 400
    (basic/transports/streamable-http.mdx)."""
    error = assert_error(call_tool(client, "failing_job", {}), 400, -32021)
    assert error["data"]["requiredCapabilities"] == {"extensions": {EXTENSION: {}}}


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_tasks_methods_without_the_extension_are_32021_before_any_lookup(client, method):
    """tasks.md, "Protocol Errors": the capability is checked first, so an unknown id
    gets -32021, not -32602."""
    response = tasks_call(client, method, "gate-test", meta=request_meta(), inputResponses={})
    error = assert_error(response, 400, -32021)
    assert error["data"]["requiredCapabilities"]["extensions"] == {EXTENSION: {}}


def test_create_result_is_flat_and_durable(client):
    """tasks.md, "Task Creation": a flat ``resultType: "task"`` result whose id a
    ``tasks/get`` finds at once; no envelope fields (ext-tasks ``schema.ts``)."""
    created = start(client, "slow_compute", {"seconds": 2, "label": "flat"})
    assert created["status"] == "working"
    assert created["ttlMs"] > 0
    assert created["pollIntervalMs"] > 0
    assert not set(ENVELOPE) & set(created)
    polled = get(client, created["taskId"])
    assert polled["resultType"] == "complete"
    assert (polled["taskId"], polled["status"]) == (created["taskId"], "working")
    assert "requestState" not in polled


def test_a_completed_task_inlines_the_call_tool_result(client):
    """tasks.md, "Task Polling": ``completed`` carries the exact ``CallToolResult``."""
    created = start(client, "slow_compute", {"seconds": 0, "label": "done"})
    run_worker()
    polled = get(client, created["taskId"])
    assert polled["status"] == "completed"
    assert polled["result"]["content"] == [{"type": "text", "text": "done: computed for 0s"}]
    assert "pollIntervalMs" not in polled


def test_a_tool_error_completes_with_is_error(client):
    """SEP-2663, "Task Execution Errors": a tool error is ``completed`` + ``isError``."""
    created = start(client, "failing_job")
    run_worker()
    polled = get(client, created["taskId"])
    assert polled["status"] == "completed"
    assert polled["result"]["isError"] is True


def test_a_protocol_error_fails_the_task_without_a_result(client):
    """SEP-2663, "Task Execution Errors": a JSON-RPC error is ``failed`` with ``error``."""
    created = start(client, "protocol_error_job")
    run_worker()
    polled = get(client, created["taskId"])
    assert polled["status"] == "failed"
    assert polled["error"]["code"] == -32602
    assert "result" not in polled


def test_input_during_a_task_partial_answers_and_resume(client):
    """tasks.md, "Task Update Requests": all outstanding requests are listed; a partial
    answer keeps ``input_required`` with the answered key gone; unknown keys are ignored;
    the last answer resumes the task."""
    task_id = start(client, "multi_input")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert polled["status"] == "input_required"
    assert set(polled["inputRequests"]) == {"first", "second"}
    assert polled["inputRequests"]["first"]["method"] == "elicitation/create"
    answer = {"action": "accept", "content": {"name": "partial-1", "confirm": True}}
    ack = result_of(tasks_call(client, "tasks/update", task_id, inputResponses={"first": answer}))
    assert ack["resultType"] == "complete"
    assert "taskId" not in ack
    polled = get(client, task_id)
    assert polled["status"] == "input_required"
    assert set(polled["inputRequests"]) == {"second"}
    ignored = {"unknown-key": {"ignored": True}}
    result_of(tasks_call(client, "tasks/update", task_id, inputResponses=ignored))
    assert get(client, task_id)["status"] == "input_required"
    second = {"action": "accept", "content": {"name": "partial-2", "confirm": True}}
    result_of(tasks_call(client, "tasks/update", task_id, inputResponses={"second": second}))
    assert get(client, task_id)["status"] == "working"
    run_worker()
    polled = get(client, task_id)
    assert polled["status"] == "completed"
    assert polled["result"]["content"][0]["text"] == "Received: partial-1, partial-2"


def test_synchronous_input_rounds_come_before_the_task(client):
    """tasks.md, "Task Creation" (MRTR first): round 1 is ``input_required`` without a
    task; the retry with the answer creates the task, which sees the answer."""
    first = result_of(call_tool(client, "test_tool_with_task", {}, meta=declaring()))
    assert first["resultType"] == "input_required"
    assert "taskId" not in first
    params = {
        "name": "test_tool_with_task",
        "arguments": {},
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
        "requestState": first["requestState"],
    }
    created = result_of(mcp_post(client, "tools/call", params, meta=declaring()))
    assert created["resultType"] == "task"
    assert "requestState" not in created
    run_worker()
    polled = get(client, created["taskId"])
    assert "Alice" in polled["result"]["content"][0]["text"]


def test_cancel_is_acknowledged_and_terminal_and_idempotent(client):
    """tasks.md, "Task Cancellation": an empty ack; the worker never runs a cancelled
    task; cancelling a finished task is acknowledged the same way."""
    task_id = start(client, "slow_compute", {"seconds": 60, "label": "long"})["taskId"]
    ack = result_of(tasks_call(client, "tasks/cancel", task_id))
    assert set(ack) <= {"resultType", "_meta"}
    assert get(client, task_id)["status"] == "cancelled"
    run_worker()
    assert get(client, task_id)["status"] == "cancelled"
    again = result_of(tasks_call(client, "tasks/cancel", task_id))
    assert again["resultType"] == "complete"


@pytest.mark.parametrize(
    ("tool", "outcome"), [("failing_job", "completed"), ("protocol_error_job", "failed")]
)
def test_cancelling_a_completed_or_failed_task_is_the_same_ack(client, tool, outcome):
    """tasks.md, "Task Cancellation" is silent on a terminal task; the conformance check
    ``tasks-cancel-terminal-idempotent-ack`` wants the empty ack, and the task keeps its
    outcome (terminal states never change)."""
    created = start(client, tool)
    run_worker()
    before = get(client, created["taskId"])
    assert before["status"] == outcome
    ack = result_of(tasks_call(client, "tasks/cancel", created["taskId"]))
    assert ack["resultType"] == "complete"
    assert get(client, created["taskId"]) == before


def test_unknown_ids_are_32602(client):
    """tasks.md, "Protocol Errors": an unknown id MUST get -32602 from ``tasks/get`` (and
    SHOULD from ``tasks/update`` and ``tasks/cancel``)."""
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        response = tasks_call(
            client, method, "tasks-conformance-nonexistent-12345", inputResponses={}
        )
        assert response.json()["error"]["code"] == -32602


def test_another_caller_cannot_see_the_task(client, django_user_model):
    """tasks.md, "Security": a task is bound to its creator; anyone else gets exactly the
    answer an unknown id gets."""
    task_id = start(client, "slow_compute", {"seconds": 1, "label": "mine"})["taskId"]
    other = django_user_model.objects.create_user("mallory")
    client.force_login(other)
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        response = tasks_call(client, method, task_id, inputResponses={})
        assert response.json()["error"] == {
            "code": -32602,
            "message": "Task not found",
            "data": {"taskId": task_id},
        }
    assert MCPTask.objects.get(pk=task_id).status == "working"


def test_mcp_name_must_match_the_task_id(client):
    """basic/transports/streamable-http.mdx, "Server Validation": a mismatched
    ``Mcp-Name`` is -32020 (HTTP 400)."""
    task_id = start(client, "slow_compute", {"seconds": 1, "label": "x"})["taskId"]
    response = tasks_call(client, "tasks/get", task_id, headers={"Mcp-Name": "other"})
    assert_error(response, 400, -32020)


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
def test_removed_methods_are_404(client, method):
    """SEP-2663: ``tasks/result`` and ``tasks/list`` do not exist: -32601, HTTP 404."""
    assert_error(mcp_post(client, method, {}, meta=declaring()), 404, -32601)


def test_a_legacy_task_param_is_ignored(client):
    """SEP-2663 backward compatibility: a ``task`` param on ``tools/call`` is ignored."""
    params = {"name": "greet", "arguments": {"name": "sep"}, "task": {"ttl": 1000}}
    result = result_of(mcp_post(client, "tools/call", params, meta=declaring()))
    assert result["content"][0]["text"] == "Hello, sep!"


@pytest.fixture
def no_tasks_framework(monkeypatch):
    """A server without a Tasks framework (neither Django 6's ``django.tasks`` nor the
    backport): ``@task`` is missing, so the job module cannot even be imported."""
    import sys
    import weakref

    from django_mcp.server import capabilities
    from django_mcp.tasks import engine

    # What discover derives is cached per site: derive it afresh, and forget it after.
    monkeypatch.setattr(capabilities, "_derived", weakref.WeakKeyDictionary())
    monkeypatch.setattr(capabilities, "_last", None)
    monkeypatch.setattr(engine, "task", None)
    monkeypatch.setattr(engine, "available", lambda: False)
    monkeypatch.delitem(sys.modules, "django_mcp.server.task_job", raising=False)


@pytest.mark.usefixtures("no_tasks_framework")
def test_without_a_tasks_framework_the_extension_is_not_offered_nor_used(client):
    """tasks.md, "Capability Negotiation": "A server that has negotiated this extension
    MAY return ``CreateTaskResult``". Without a Tasks framework ``server/discover`` leaves
    the extension out and the tasks methods do not exist, so a declaring call of an
    optional tool runs synchronously (it was -32603: the call tried to enqueue a job), and
    a required tool, which cannot run at all, answers a tool error saying why."""
    capabilities = result_of(mcp_post(client, "server/discover"))["capabilities"]
    assert EXTENSION not in capabilities.get("extensions", {})
    assert_error(tasks_call(client, "tasks/get", "any"), 404, -32601)

    arguments = {"seconds": 0, "label": "x"}
    result = result_of(call_tool(client, "slow_compute", arguments, meta=declaring()))
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "x: computed for 0s"

    result = result_of(call_tool(client, "failing_job", {}, meta=declaring()))
    assert result["isError"] is True
    assert "no Tasks framework" in result["content"][0]["text"]
    assert not MCPTask.objects.exists()
