"""The tasks guide's examples (docs/guides/tasks.md): long-running tools as MCP tasks."""

from __future__ import annotations

import django_mcp
from django_mcp import Context, ToolError
from django_mcp.server.input_requests import Elicit


# [docs:optional]
@django_mcp.tool(task="optional")
def build_report(ctx: Context, year: int) -> str:
    """Build the yearly report: a task for clients that support tasks."""
    months = []
    for month in range(1, 13):
        ctx.report_progress(month, total=12, message=f"month {month} of 12")  # checks cancel
        months.append(f"{year}-{month:02d}")
    return f"Report over {len(months)} months"


# [/docs:optional]


# [docs:required]
@django_mcp.tool(task="required", destructive=True)
def purge_archive(ctx: Context, archive: str) -> str:
    """Delete an archive, after the user confirms (asked inside the task)."""
    answer = ctx.elicit(f"Delete {archive} for good?", {"confirm": bool}, key="confirm")
    if not (answer.accepted and (answer.content or {}).get("confirm")):
        raise ToolError(f"{archive} was kept")
    return f"{archive} deleted"


# [/docs:required]


# [docs:inputs-first]
@django_mcp.tool(task="required", task_inputs={"region": Elicit("Which region?", {"name": str})})
def migrate_region(ctx: Context) -> str:
    """Ask the region synchronously, then run the migration as a task."""
    region = (ctx.elicit("Which region?", {"name": str}, key="region").content or {})["name"]
    return f"Migrated {region}"


# [/docs:inputs-first]
