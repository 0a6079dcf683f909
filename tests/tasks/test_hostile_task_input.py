"""Task ids, task arguments and listen filters a client can send that the task store cannot
take: each refused or answered as unknown, never an internal error or an HTML 500.

PostgreSQL keeps no NUL in text or ``jsonb`` and refuses to compare a NUL with text; a
query takes a bounded number of parameters. Found by a hostile probe: a NUL task id was
-32603 on PostgreSQL, a NUL in a task's arguments or ``_meta`` too, and a listen filter with
a NUL or 300,000 task ids was an HTML 500. Rules: ext-tasks ``specification/2026-07-28/tasks.md``
("Protocol Errors": an unknown id is -32602) and basic/index.mdx ("Error Codes": -32602 for
invalid params, -32603 only for the server's own failures).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext

from django_mcp.protocol.subscriptions import MAX_LISTED
from django_mcp.tasks.models import MCPTask
from tests.helpers import assert_error, call_tool, mcp_post
from tests.tasks.support import declaring, get, run_worker, start, tasks_call

pytestmark = pytest.mark.django_db

TASK_TABLE = MCPTask._meta.db_table


def task_queries(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if TASK_TABLE in q["sql"]]


@pytest.mark.parametrize("method", ["tasks/get", "tasks/cancel", "tasks/update"])
@pytest.mark.parametrize("task_id", ["\x00", "a\x00b", "x" * 65], ids=["nul", "inner-nul", "long"])
def test_an_id_no_task_could_have_is_unknown_without_a_query(client, method, task_id):
    """tasks.md, "Protocol Errors": -32602, as for any unknown id; not looked up, so
    PostgreSQL never sees the NUL (it used to answer -32603)."""
    with CaptureQueriesContext(connection) as queries:
        error = assert_error(tasks_call(client, method, task_id), 200, -32602)
    assert error["message"] == "Task not found"
    assert task_queries(queries) == []


def test_a_nul_in_the_arguments_of_a_task_is_refused_naming_it(client):
    response = call_tool(client, "slow_compute", {"seconds": 1, "label": "a\x00"}, meta=declaring())
    error = assert_error(response, 200, -32602)
    assert error["message"] == (
        "params.arguments.label holds a NUL character (\\u0000), which a task cannot keep"
    )
    assert not MCPTask.objects.exists()


def test_a_nul_in_the_meta_of_a_task_is_refused_naming_it(client):
    meta = declaring()
    meta["x-note"] = {"k\x00": 1}
    response = call_tool(client, "slow_compute", {"seconds": 1}, meta=meta)
    error = assert_error(response, 200, -32602)
    assert error["message"].startswith("params._meta.x-note (a key) holds a NUL character")
    assert not MCPTask.objects.exists()


def test_a_nul_in_an_answer_to_a_task_is_refused_and_the_task_waits(client):
    task_id = start(client, "multi_input")["taskId"]
    run_worker()
    answer = {"action": "accept", "content": {"name": "n\x00", "confirm": True}}
    response = tasks_call(client, "tasks/update", task_id, inputResponses={"first": answer})
    error = assert_error(response, 200, -32602)
    assert error["message"].startswith("params.inputResponses.first.content.name holds a NUL")
    assert set(get(client, task_id)["inputRequests"]) == {"first", "second"}


def listen(client: Any, task_ids: list[str]) -> Any:
    params = {"notifications": {"taskIds": task_ids}}
    return mcp_post(client, "subscriptions/listen", params, meta=declaring())


def test_a_listen_filter_listing_too_many_task_ids_is_refused(client):
    """A query takes a bounded number of parameters (300,000 distinct ids failed on SQLite
    as an HTML 500): one stream lists at most ``MAX_LISTED``."""
    error = assert_error(listen(client, [f"t{i}" for i in range(MAX_LISTED + 1)]), 200, -32602)
    assert error["message"] == (
        f"params.notifications.taskIds lists {MAX_LISTED + 1} items; "
        f"one stream takes at most {MAX_LISTED}"
    )


def test_a_listen_filter_keeps_ids_no_task_could_have_out_of_the_query(client):
    """The NUL id (an HTML 500 on PostgreSQL) is left out, like any unknown id."""
    from django_mcp import site
    from django_mcp.protocol.subscriptions import SubscriptionFilter
    from django_mcp.server import tasking
    from django_mcp.server.task_runner import context_for

    mine = start(client, "slow_compute", {"seconds": 1, "label": "x"})["taskId"]
    context = context_for(MCPTask.objects.get(pk=mine), site)
    wanted = SubscriptionFilter(task_ids=("\x00", mine, "y" * 100))
    with CaptureQueriesContext(connection) as queries:
        honoured = tasking.listen_filter(site, wanted, context)
    assert honoured.task_ids == (mine,)
    [query] = task_queries(queries)
    assert "\x00" not in query
    assert "y" * 100 not in query


def test_a_listen_filter_that_fails_unexpectedly_is_an_internal_error_not_a_500(
    client, monkeypatch, validate_exchange
):
    """basic/index.mdx: a server failure is -32603 in a JSON-RPC body, as for every other
    method; it used to escape as Django's HTML error page."""
    from django_mcp.server import tasking

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise DatabaseError("the database went away")

    monkeypatch.setattr(tasking, "listen_filter", broken)
    monkeypatch.setattr("django_mcp.server.dispatch.listen_filter", broken)
    response = listen(client, ["abc"])
    assert_error(response, 200, -32603)
    assert response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    "answer",
    [{"action": "bogus"}, {"action": "accept", "content": "not an object"}, {"content": {}}],
)
def test_an_answer_of_the_wrong_shape_is_refused_and_the_task_waits(client, answer):
    """tasks.md, "Task Update Requests": answers are the results of the requests the task
    listed; one that is no elicitation result is -32602 now, as in a synchronous round
    (basic/patterns/mrtr.mdx), rather than accepted and failing the task when it resumes."""
    task_id = start(client, "multi_input")["taskId"]
    run_worker()
    response = tasks_call(client, "tasks/update", task_id, inputResponses={"first": answer})
    assert_error(response, 200, -32602)
    assert set(get(client, task_id)["inputRequests"]) == {"first", "second"}


@pytest.mark.parametrize("responses", ["omitted", None, [], "yes"])
def test_an_update_without_an_inputresponses_object_is_32602(client, responses):
    """ext-tasks ``schema/draft/schema.ts``: ``UpdateTaskRequest.params.inputResponses`` is
    required. A ``tasks/update`` without it was acknowledged as if it had answered nothing;
    it is -32602 like one whose ``inputResponses`` is no object, and the task waits."""
    task_id = start(client, "multi_input")["taskId"]
    run_worker()
    params = {} if responses == "omitted" else {"inputResponses": responses}
    response = tasks_call(client, "tasks/update", task_id, **params)
    error = assert_error(response, 200, -32602)
    assert "inputResponses" in error["message"]
    assert get(client, task_id)["status"] == "input_required"


def test_an_unpaired_surrogate_in_the_meta_of_a_task_is_refused_naming_it(client):
    """Admission leaves ``_meta`` to its own rules, but a task keeps its ``_meta`` in a JSON
    column, and PostgreSQL's ``jsonb`` refuses an unpaired surrogate (-32603 before)."""
    meta = declaring()
    meta["x-note"] = "a\ud800b"
    response = call_tool(client, "slow_compute", {"seconds": 1}, meta=meta)
    error = assert_error(response, 200, -32602)
    assert error["message"] == (
        "params._meta.x-note holds an unpaired UTF-16 surrogate, which a task cannot keep"
    )
    assert not MCPTask.objects.exists()


@pytest.mark.parametrize(
    "content",
    [{"name": 5, "confirm": True}, {"name": "n\x00", "confirm": True}],
    ids=["wrong-shape", "nul"],
)
def test_an_answer_to_a_request_made_after_the_update_read_the_task_is_checked_too(
    client, monkeypatch, content
):
    """tasks.md, "Task Update Requests" and basic/patterns/mrtr.mdx: an answer is checked
    against the request it answers. The keys a task asks for are the tool's (``first``
    here), so a client may send answers while the task still runs; the worker may ask
    between the update's read and its write. Those answers were stored unchecked: a wrong
    one failed the task when it resumed, and a NUL was -32603 on PostgreSQL."""
    from django_mcp.server import tasking

    task_id = start(client, "multi_input")["taskId"]
    before = MCPTask.objects.get(pk=task_id)  # as the update read it: nothing outstanding
    run_worker()  # the worker asks for "first" and "second" meanwhile
    monkeypatch.setattr(tasking, "lookup", lambda *args, **kwargs: before)
    answers = {"first": {"action": "accept", "content": content}, "second": {"action": "decline"}}
    response = tasks_call(client, "tasks/update", task_id, inputResponses=answers)
    monkeypatch.undo()
    assert_error(response, 200, -32602)
    polled = get(client, task_id)
    assert polled["status"] == "input_required"
    assert set(polled["inputRequests"]) == {"first", "second"}
