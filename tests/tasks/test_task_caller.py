"""Who a task acts as: its creator, with the creator's credential, in its runs and in every
request about it.

ext-tasks ``specification/draft/tasks.md``, "Security Considerations": servers MUST
authenticate and authorize every task-related request, and a task's outcome is what the
underlying request would have returned ("Task Execution Errors"). So a run sees the
creating call's user and scopes, a permission-gated tool runs as a task at all, and
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` need what calling the tool needs.
"""

from __future__ import annotations

from typing import Any

import pytest

from django_mcp import Context
from django_mcp.auth.models import AccessToken
from tests.helpers import call_tool, error_of, result_of
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


def test_a_permission_gated_tool_runs_as_a_task(client, mcp_site, django_user_model):
    """The creating call passed the permission check, so the run does too: the worker
    checks it with the creator's context (without one, every gated tool looked hidden and
    the task failed with "no longer served")."""

    @mcp_site.tool(task="required", permission=lambda ctx: ctx.user.is_authenticated)
    def gated_job(ctx: Context) -> str:
        return "ran"

    client.force_login(django_user_model.objects.create_user("alice"))
    task_id = start(client, "gated_job")["taskId"]
    run_worker()
    assert text_of(get(client, task_id)) == "ran"


def test_a_run_sees_its_creator_as_ctx_user(client, mcp_site, django_user_model):
    @mcp_site.tool(task="required")
    def whoami(ctx: Context) -> str:
        return f"{ctx.user.get_username()} via {ctx.caller.method}"

    client.force_login(django_user_model.objects.create_user("alice"))
    task_id = start(client, "whoami")["taskId"]
    run_worker()
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


def test_a_task_whose_creator_was_deactivated_fails_instead_of_running(
    client, mcp_site, django_user_model
):
    """Django refuses a deactivated user their session; a task they queued before is not a
    way around that."""
    ran: list[str] = []

    @mcp_site.tool(task="required")
    def queued_job(ctx: Context) -> str:
        ran.append(ctx.user.get_username())
        return "ran"

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


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_acting_on_a_task_needs_the_scopes_of_its_tool(client, mcp_site, django_user_model, method):
    """Another token of the same user that may not call the tool may not read its output,
    answer it or cancel it either: 403 ``insufficient_scope`` naming the tool's scopes, as
    for the call (basic/authorization.mdx, "Scope Challenge Handling")."""

    @mcp_site.tool(task="required", scopes_required=["payroll:read"])
    def payroll_report() -> str:
        return "SALARIES"

    alice = django_user_model.objects.create_user("alice")
    strong = bearer(token_for(alice, "payroll:read"))
    weak = bearer(token_for(alice, "calendar:read"))
    created = result_of(call_tool(client, "payroll_report", {}, meta=declaring(), headers=strong))
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

    client.force_login(django_user_model.objects.create_user("alice"))
    task_id = start(client, "reviewed")["taskId"]
    run_worker()
    assert text_of(get(client, task_id)) == "ran"

    allowed["alice"] = False
    hidden = error_of(tasks_call(client, "tasks/get", task_id))
    assert (hidden["code"], hidden["message"]) == (-32602, "Task not found")
