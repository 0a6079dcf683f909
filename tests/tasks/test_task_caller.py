"""Who a task acts as: its creator, with the creator's credential, in its runs and in every
request about it.

ext-tasks ``specification/2026-07-28/tasks.md``, "Security Considerations": servers MUST
authenticate and authorize every task-related request, and a task's outcome is what the
underlying request would have returned ("Task Execution Errors"). So a run sees the
creating call's user and scopes, a permission-gated tool runs as a task at all, and
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` need what calling the tool needs.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import OperationalError, connections
from django.test import AsyncClient

from django_mcp import Context
from django_mcp.auth.caller import Caller
from django_mcp.auth.models import AccessToken
from django_mcp.protocol.subscriptions import SubscriptionFilter
from django_mcp.server import tasking
from django_mcp.server.task_runner import context_for
from django_mcp.tasks.models import MCPTask
from tests.helpers import call_tool, error_of, mcp_headers, result_of
from tests.stateless_users import stateless_bearer, stateless_settings
from tests.tasks.support import declaring, get, run_worker, start, tasks_call

pytestmark = pytest.mark.django_db


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def token_for(user: Any, scopes: str) -> str:
    _, plaintext = AccessToken.objects.issue(user, scopes=scopes)
    return plaintext


def text_of(polled: dict[str, Any]) -> str:
    """The text of a completed task's result (its error, if it failed instead)."""
    assert polled["status"] == "completed", polled.get("error")
    text: str = polled["result"]["content"][0]["text"]
    return text


def run_as_alice(client: Any, user_model: Any, tool: str) -> str:
    """Sign alice in, start ``tool`` as a task, run the worker once; the task's id."""
    client.force_login(user_model.objects.create_user("alice"))
    task_id: str = start(client, tool)["taskId"]
    run_worker()
    return task_id


def test_a_permission_gated_tool_runs_as_a_task(client, mcp_site, django_user_model):
    """The creating call passed the permission check, so the run does too: the worker
    checks it with the creator's context (without one, every gated tool looked hidden and
    the task failed with "no longer served")."""

    @mcp_site.tool(task="required", permission=lambda ctx: ctx.user.is_authenticated)
    def gated_job(ctx: Context) -> str:
        return "ran"

    assert text_of(get(client, run_as_alice(client, django_user_model, "gated_job"))) == "ran"


def test_a_run_sees_its_creator_as_ctx_user(client, mcp_site, django_user_model):
    @mcp_site.tool(task="required")
    def whoami(ctx: Context) -> str:
        return f"{ctx.user.get_username()} via {ctx.caller.method}"

    task_id = run_as_alice(client, django_user_model, "whoami")
    assert text_of(get(client, task_id)) == "alice via session"


def test_a_scope_limited_token_stays_scope_limited_inside_its_task(
    client, mcp_site, django_user_model
):
    """A ``books:read`` token refused a write by the tool's own scope check is refused the
    same write when the same call runs as a task (it ran with no scope limit before)."""

    @mcp_site.tool(task="optional")
    def delete_books(ctx: Context) -> str:
        if not ctx.caller.has_scopes({"books:write"}):
            return "refused: needs books:write"
        return "deleted"

    headers = bearer(token_for(django_user_model.objects.create_user("reader"), "books:read"))
    called = result_of(call_tool(client, "delete_books", {}, headers=headers))
    assert called["content"][0]["text"] == "refused: needs books:write"
    created = result_of(call_tool(client, "delete_books", {}, meta=declaring(), headers=headers))
    run_worker()
    polled = result_of(tasks_call(client, "tasks/get", created["taskId"], headers=headers))
    assert text_of(polled) == "refused: needs books:write"


def queued_job(mcp_site: Any) -> list[str]:
    """Declare ``queued_job``, a task tool; the list of the users it ran as."""
    ran: list[str] = []

    @mcp_site.tool(task="required")
    def queued_job(ctx: Context) -> str:
        ran.append(ctx.user.get_username())
        return "ran"

    return ran


@pytest.mark.parametrize("how", ["revoked", "deleted"])
def test_a_task_whose_token_was_revoked_fails_instead_of_running(
    client, mcp_site, django_user_model, how
):
    """A task acts with the credential that created it (ext-tasks ``tasks.md``, "Security
    Considerations"): once an operator revokes (or deletes) that token, a run queued with
    it, perhaps by whoever leaked it, must not go ahead with its authority. It did."""
    ran = queued_job(mcp_site)
    alice = django_user_model.objects.create_user("alice")
    leaked = token_for(alice, "")
    created = result_of(
        call_tool(client, "queued_job", {}, meta=declaring(), headers=bearer(leaked))
    )
    row = AccessToken.objects.get(user=alice)
    if how == "revoked":
        row.revoke()
    else:
        row.delete()
    run_worker()
    assert ran == []
    fresh = bearer(token_for(alice, ""))
    polled = result_of(tasks_call(client, "tasks/get", created["taskId"], headers=fresh))
    assert polled["status"] == "failed"
    assert polled["error"]["message"] == "The access token that created this task was revoked"


def test_a_deleted_users_tasks_are_not_a_new_user_with_the_same_key(
    client, mcp_site, django_user_model
):
    """ext-tasks ``tasks.md``, "Security Considerations": a task is bound to its creator.
    Tasks are owned by ``user:<pk>``, so a new user given the deleted one's primary key
    (a natural key, or a reset auto-increment counter) read their results; they now go
    with the user, as a foreign key's CASCADE would take them. Others' tasks stay."""

    @mcp_site.tool(task="required")
    def private_report(ctx: Context) -> str:
        return f"salary of {ctx.user.get_username()}"

    bob = django_user_model.objects.create_user("bob")
    client.force_login(bob)
    kept = start(client, "private_report")["taskId"]
    alice = django_user_model.objects.create_user("alice")
    client.force_login(alice)
    gone = start(client, "private_report")["taskId"]
    run_worker()
    key = alice.pk
    alice.delete()

    assert list(MCPTask.objects.values_list("pk", flat=True)) == [kept]
    client.force_login(django_user_model.objects.create_user("mallory", pk=key))
    error = error_of(tasks_call(client, "tasks/get", gone))
    assert (error["code"], error["message"]) == (-32602, "Task not found")


def test_a_task_whose_creator_was_deactivated_fails_instead_of_running(
    client, mcp_site, django_user_model
):
    """Django refuses a deactivated user their session; a task they queued before is not a
    way around that."""
    ran = queued_job(mcp_site)
    alice = django_user_model.objects.create_user("alice")
    headers = bearer(token_for(alice, ""))
    created = result_of(call_tool(client, "queued_job", {}, meta=declaring(), headers=headers))
    alice.is_active = False
    alice.save()
    run_worker()
    assert ran == []
    alice.is_active = True  # to read the task again
    alice.save()
    polled = result_of(tasks_call(client, "tasks/get", created["taskId"], headers=headers))
    assert polled["status"] == "failed"
    assert "no longer exists or is inactive" in polled["error"]["message"]


def payroll_task(client: Any, mcp_site: Any, user_model: Any) -> tuple[Any, Any, Any, Any]:
    """A task of ``payroll_report`` (which needs ``payroll:read``) created by alice with a
    token that has the scope; returns alice, that token's headers, the headers of one of
    hers without the scope, and the ``CreateTaskResult``."""

    @mcp_site.tool(task="required", scopes_required=["payroll:read"])
    def payroll_report() -> str:
        return "SALARIES"

    alice = user_model.objects.create_user("alice")
    strong = bearer(token_for(alice, "payroll:read"))
    weak = bearer(token_for(alice, "calendar:read"))
    created = result_of(call_tool(client, "payroll_report", {}, meta=declaring(), headers=strong))
    return alice, strong, weak, created


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_acting_on_a_task_needs_the_scopes_of_its_tool(client, mcp_site, django_user_model, method):
    """Another token of the same user that may not call the tool may not read its output,
    answer it or cancel it either: 403 ``insufficient_scope`` naming the tool's scopes, as
    for the call (basic/authorization.mdx, "Scope Challenge Handling")."""

    _, strong, weak, created = payroll_task(client, mcp_site, django_user_model)
    run_worker()
    extra = {"inputResponses": {}} if method == "tasks/update" else {}

    refused = tasks_call(client, method, created["taskId"], headers=weak, **extra)

    assert refused.status_code == 403
    assert 'error="insufficient_scope"' in refused["WWW-Authenticate"]
    assert "payroll:read" in refused["WWW-Authenticate"]
    allowed = result_of(tasks_call(client, method, created["taskId"], headers=strong, **extra))
    assert allowed["resultType"] == "complete"
    polled = result_of(tasks_call(client, "tasks/get", created["taskId"], headers=strong))
    assert text_of(polled) == "SALARIES"


def test_a_task_whose_tool_the_caller_may_no_longer_see_is_unknown_to_them(
    client, mcp_site, django_user_model
):
    """A permission taken away after the call hides the task as it hides the tool: the
    same -32602 as an unknown id (ext-tasks ``tasks.md``, "Protocol Errors")."""
    allowed = {"alice": True}

    @mcp_site.tool(task="required", permission=lambda ctx: allowed[ctx.user.get_username()])
    def reviewed(ctx: Context) -> str:
        return "ran"

    task_id = run_as_alice(client, django_user_model, "reviewed")
    assert text_of(get(client, task_id)) == "ran"

    allowed["alice"] = False
    hidden = error_of(tasks_call(client, "tasks/get", task_id))
    assert (hidden["code"], hidden["message"]) == (-32602, "Task not found")


def test_a_listen_stream_gets_no_task_whose_tool_scopes_the_caller_lacks(
    client, mcp_site, django_user_model
):
    """A listen stream's ``notifications/tasks`` carry the task's result, so ``taskIds``
    needs what ``tasks/get`` needs: a token without the tool's scopes is left out of the
    acknowledgement (basic/patterns/subscriptions.mdx: nothing the client may not see)."""

    alice, _, _, created = payroll_task(client, mcp_site, django_user_model)
    task = MCPTask.objects.get(pk=created["taskId"])
    wanted = SubscriptionFilter(task_ids=(task.id,))

    context = context_for(task, mcp_site)
    assert tasking.listen_filter(mcp_site, wanted, context).task_ids == (task.id,)
    context.caller = Caller(alice, frozenset({"calendar:read"}), "token:2", "token")
    assert tasking.listen_filter(mcp_site, wanted, context).task_ids == ()


@pytest.mark.django_db(transaction=True)
def test_an_anonymous_tasks_get_on_a_scoped_site_under_asgi(mcp_site):
    """The scope check of ``tasks/*`` reads the task row: admission, which runs on the event
    loop for an anonymous caller, moves to a thread for it (it was an HTML 500,
    SynchronousOnlyOperation)."""

    @mcp_site.tool(task="required")
    def job() -> str:
        return "done"

    @mcp_site.tool(scopes_required=["admin"])
    def admin_only() -> str:
        return "secret"

    async def post(method: str, params: dict[str, Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return await AsyncClient().post(
            "/mcp", json.dumps(body), content_type="application/json", headers=mcp_headers(body)
        )

    async def create_then_poll() -> Any:
        created = await post("tools/call", {"name": "job", "arguments": {}, "_meta": declaring()})
        task_id = json.loads(created.content)["result"]["taskId"]
        polled = await post("tasks/get", {"taskId": task_id, "_meta": declaring()})
        await sync_to_async(connections.close_all)()  # the views' thread's own connection
        return task_id, polled

    task_id, polled = asyncio.run(create_then_poll())
    assert polled.status_code == 200, polled.content[:300]
    assert json.loads(polled.content)["result"]["taskId"] == task_id


def test_a_database_error_in_the_task_scope_check_is_a_json_rpc_error(
    client, mcp_site, django_user_model, monkeypatch
):
    """server/outage.py: a request that needs the database never gets an HTML page."""

    @mcp_site.tool(task="required", scopes_required=["payroll:read"])
    def payroll_report() -> str:
        return "SALARIES"

    headers = bearer(token_for(django_user_model.objects.create_user("alice"), "payroll:read"))
    created = result_of(call_tool(client, "payroll_report", {}, meta=declaring(), headers=headers))

    def database_down(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("could not connect to server: db.internal:5432")

    monkeypatch.setattr(MCPTask.objects, "filter", database_down)
    polled = tasks_call(client, "tasks/get", created["taskId"], headers=headers)
    assert polled.status_code == 200
    assert polled["Content-Type"] == "application/json"
    assert error_of(polled)["code"] == -32603
    assert "db.internal" not in polled.content.decode()


@pytest.mark.django_db(transaction=True)
def test_odd_scopes_and_credential_ids_do_not_stop_a_task_being_created(
    client, mcp_site, django_user_model
):
    """Scopes and ids come from a token: a scope no database keeps (NUL) is dropped, which
    only narrows the runs' authority, and the id and method are made storable and cut to
    their columns (on PostgreSQL the task creation failed with -32603)."""
    from django_mcp.tasks import store

    task = store.create(
        site="test",
        owner="anonymous",
        tool="x",
        arguments={},
        request_meta={},
        ttl_ms=None,
        scopes=["mcp", "books:read\x00x", "\ud800"],
        credential="abc\x00def" + "x" * 300,
        auth_method="m" * 60,
    )
    task.refresh_from_db()
    assert task.scopes == ["mcp"]
    assert task.credential.startswith("abcdef")
    assert len(task.credential) == 255
    assert task.auth_method == "m" * 40


def test_a_task_whose_tool_left_the_site_still_needs_the_tools_scopes(
    client, mcp_site, django_user_model
):
    """ext-tasks ``tasks.md``, "Security Considerations": a task acts with its tool's
    authority. Once a deploy removed the tool, the site no longer knew its scopes, and any
    token of the owner read the task's result; the task keeps the scopes it was created
    under. A token with them still reads it (its failure or result stays readable)."""

    @mcp_site.tool(task="required")
    def calendar_report() -> str:  # the site still serves tasks
        return "MEETINGS"

    alice, strong, weak, created = payroll_task(client, mcp_site, django_user_model)
    run_worker()
    mcp_site.unregister("payroll_report")

    hidden = error_of(tasks_call(client, "tasks/get", created["taskId"], headers=weak))
    assert (hidden["code"], hidden["message"]) == (-32602, "Task not found")
    assert text_of(result_of(tasks_call(client, "tasks/get", created["taskId"], headers=strong)))
    task = MCPTask.objects.get(pk=created["taskId"])
    wanted = SubscriptionFilter(task_ids=(task.id,))
    context = context_for(task, mcp_site)
    context.caller = Caller(alice, frozenset({"calendar:read"}), "token:2", "token")
    assert tasking.listen_filter(mcp_site, wanted, context).task_ids == ()


def stateless_caller(settings: Any, django_user_model: Any) -> dict[str, str]:
    """Authenticate through a DRF class that builds its user from the token (simplejwt's
    ``TokenUser``), sharing its pk with a row that may do more; that caller's headers."""
    pytest.importorskip("rest_framework")
    stateless_settings(settings)
    row = django_user_model.objects.create_user("row", is_superuser=True)  # the row may
    return stateless_bearer(row.pk)


def gated_tool(mcp_site: Any, task: str) -> None:
    """Declare ``gated``: it answers with what its caller's own permission check says."""

    @mcp_site.tool(task=task)  # type: ignore[arg-type]
    def gated(ctx: Context) -> str:
        allowed = ctx.user.has_perm("books.delete_book")
        return f"{type(ctx.user).__name__} allowed={allowed}"


def test_an_optional_task_of_a_user_built_from_its_token_runs_now_as_that_user(
    client, mcp_site, settings, django_user_model
):
    """ext-tasks ``tasks.md``, "Security Considerations": a task acts as the caller that
    created it. A worker rebuilds that caller from the database, where a user a DRF class
    built from its token has only the row sharing its pk, which may hold more (here a
    superuser). So the server, which decides whether an optional call becomes a task
    ("Capability Negotiation"), runs it now instead: as the caller who asked. Before, the
    task ran as the row, with every permission the token's user lacked."""
    headers = stateless_caller(settings, django_user_model)
    gated_tool(mcp_site, "optional")

    called = result_of(call_tool(client, "gated", {}, meta=declaring(), headers=headers))
    run_worker()

    assert called["resultType"] == "complete", called
    assert called["content"][0]["text"] == "StatelessUser allowed=False"
    assert not MCPTask.objects.exists()


def test_a_required_task_of_a_user_built_from_its_token_is_a_tool_error(
    client, mcp_site, settings, django_user_model
):
    """The same caller and a tool that runs only as a task: no task is made (its runs
    would act as the row), and the call answers a tool error saying why, which the
    model can read (server/tools.mdx, "Error Handling")."""
    headers = stateless_caller(settings, django_user_model)
    gated_tool(mcp_site, "required")

    called = result_of(call_tool(client, "gated", {}, meta=declaring(), headers=headers))

    assert called["isError"] is True
    assert called["content"][0]["text"] == tasking.UNSTORED_CALLER % "gated"
    assert not MCPTask.objects.exists()


def test_a_user_row_signed_in_through_the_same_drf_class_still_runs_as_a_task(
    client, mcp_site, settings, django_user_model
):
    """Only a user the worker cannot read again is kept out of tasks: a DRF class that
    returns a row of the user model (token or session authentication) still makes one."""
    pytest.importorskip("rest_framework")
    stateless_settings(settings)
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "DRF_AUTHENTICATION_CLASSES": ["rest_framework.authentication.BasicAuthentication"],
    }
    django_user_model.objects.create_user("basic", password="pw")
    gated_tool(mcp_site, "required")
    basic = {"Authorization": "Basic " + base64.b64encode(b"basic:pw").decode()}

    created = result_of(call_tool(client, "gated", {}, meta=declaring(), headers=basic))
    run_worker()

    polled = result_of(tasks_call(client, "tasks/get", created["taskId"], headers=basic))
    assert text_of(polled) == "User allowed=False"


@pytest.mark.django_db(transaction=True)
def test_a_listen_stream_stops_telling_of_a_task_its_caller_may_no_longer_see(
    client, mcp_site, django_user_model, rf
):
    """``notifications/tasks`` carry the task's result (ext-tasks ``tasks.md``, "Task
    Status Notifications"), so each one needs what ``tasks/get`` needs at that moment, not
    only what the stream's caller had when it opened: a permission taken away since (the
    stream's recheck re-reads the caller) stops them, as it makes ``tasks/get`` answer
    "not found" (basic/patterns/subscriptions.mdx: nothing the client may not see)."""
    from django_mcp.server.dispatch import MCPServer
    from tests.helpers import mcp_body

    allowed = {"alice": True}

    @mcp_site.tool(task="required", permission=lambda ctx: allowed[ctx.user.get_username()])
    def reviewed(ctx: Context) -> str:
        return "ran"

    task_id = run_as_alice(client, django_user_model, "reviewed")
    server = MCPServer(mcp_site)
    params = {"notifications": {"taskIds": [task_id]}}
    body = mcp_body("subscriptions/listen", params, id="l", meta=declaring())
    admitted = server.admit(json.dumps(body).encode(), None)
    request = rf.post("/mcp")
    request.user = django_user_model.objects.get(username="alice")
    listener = server.open_listen(admitted, request=request)
    assert listener.filter.task_ids == (task_id,)
    event = {"method": "notifications/tasks", "uri": task_id, "task": {"taskId": task_id}}

    assert asyncio.run(listener.render(dict(event, task={"taskId": task_id}))) is not None
    allowed["alice"] = False
    assert asyncio.run(listener.render(event)) is None
