"""A task of a tool that the site's own lookup serves and its registry does not hold
(built per caller, as the tools guide allows).

The Tasks extension was offered, and a task's tool found by its run and by
``tasks/get|update|cancel``, from the registry alone: such a tool never ran as a task
(-32021 for a required one), a run of it failed "no longer served", and acting on its
task skipped the scope check of its tool (ext-tasks ``tasks.md``, "Security
Considerations"; basic/authorization.mdx, "Scope Challenge Handling").
"""

from __future__ import annotations

from typing import Any

import pytest

from django_mcp import Context
from django_mcp.auth.models import AccessToken
from django_mcp.declarations.tools import ToolSpec
from django_mcp.sites import MCPSite
from tests.helpers import call_tool, error_of, result_of
from tests.tasks.support import declaring, run_worker, tasks_call

pytestmark = pytest.mark.django_db


def payroll(ctx: Context) -> str:
    return f"SALARIES for {ctx.user.get_username()}"


PAYROLL = ToolSpec.from_options(payroll, {"task": "required", "scopes_required": "payroll:read"})


def bearer(user: Any, scopes: str) -> dict[str, str]:
    _, plaintext = AccessToken.objects.issue(user, scopes=scopes)
    return {"Authorization": f"Bearer {plaintext}"}


def serve_payroll(site: MCPSite, hidden_from: set[str] | None = None) -> None:
    """Replace the site's tool lookup: :data:`PAYROLL` for signed-in callers, but those
    named in ``hidden_from``."""

    def get_tool(name: str, context: Context | None = None) -> Any:
        signed_in = context is not None and context.user.is_authenticated
        hidden = context is not None and context.user.get_username() in (hidden_from or ())
        return PAYROLL if name == PAYROLL.name and signed_in and not hidden else None

    site.get_tool = get_tool  # type: ignore[method-assign]


def test_a_tool_the_sites_lookup_serves_runs_as_a_task_with_its_scopes(
    client: Any, mcp_site: MCPSite, django_user_model: Any
) -> None:
    serve_payroll(mcp_site)
    alice = django_user_model.objects.create_user("alice")
    strong, weak = bearer(alice, "payroll:read"), bearer(alice, "calendar:read")

    created = result_of(call_tool(client, "payroll", {}, meta=declaring(), headers=strong))
    assert created["resultType"] == "task", created
    run_worker()
    refused = tasks_call(client, "tasks/get", created["taskId"], headers=weak)
    polled = result_of(tasks_call(client, "tasks/get", created["taskId"], headers=strong))

    assert refused.status_code == 403
    assert "payroll:read" in refused["WWW-Authenticate"]
    assert polled["status"] == "completed", polled.get("error")
    assert polled["result"]["content"][0]["text"] == "SALARIES for alice"


def test_a_task_whose_tool_the_sites_lookup_no_longer_serves_the_caller_is_unknown(
    client: Any, mcp_site: MCPSite, django_user_model: Any
) -> None:
    """The lookup hiding the tool from its caller hides the task, as a permission taken
    away does for a registered tool: the same -32602 as an unknown id (ext-tasks
    ``tasks.md``, "Protocol Errors"). The registry does not hold the tool, which made it
    look like one that left the site, whose task stays readable."""
    hidden_from: set[str] = set()
    serve_payroll(mcp_site, hidden_from)
    client.force_login(django_user_model.objects.create_user("alice"))
    created = result_of(call_tool(client, "payroll", {}, meta=declaring()))
    run_worker()

    hidden_from.add("alice")
    hidden = error_of(tasks_call(client, "tasks/get", created["taskId"]))
    assert (hidden["code"], hidden["message"]) == (-32602, "Task not found")
