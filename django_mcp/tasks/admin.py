"""The read-only admin of MCP tasks, shown beside the request log: tasks are changed only
by their clients and workers, and purged by ``manage.py mcp_purge_tasks``."""

from __future__ import annotations

from django.contrib import admin

from django_mcp.admin_readonly import ReadOnlyAdmin
from django_mcp.tasks.models import MCPTask
from django_mcp.tasks.store import shown_message


@admin.register(MCPTask)
class MCPTaskAdmin(ReadOnlyAdmin):
    """View only; arguments, answers and results are shown as stored."""

    list_display = (
        "id",
        "tool",
        "status",
        "client_status_message",
        "owner",
        "site",
        "created_at",
        "last_updated_at",
    )
    list_filter = ("status", "site")
    search_fields = ("=id", "tool", "owner")
    ordering = ("-created_at",)
    readonly_fields = ("client_status_message",)

    @admin.display(description="status message (as clients see it)")
    def client_status_message(self, task: MCPTask) -> str:
        """What ``tasks/get`` shows, "waiting for a worker" included, which the stored
        ``status_message`` (the tool's own) does not hold."""
        return shown_message(task)
