"""The read-only admin of MCP tasks, shown beside the request log: tasks are changed only
by their clients and workers, and purged by ``manage.py mcp_purge_tasks``."""

from __future__ import annotations

from django.contrib import admin

from django_mcp.admin_readonly import ReadOnlyAdmin
from django_mcp.tasks.models import MCPTask


@admin.register(MCPTask)
class MCPTaskAdmin(ReadOnlyAdmin):
    """View only; arguments, answers and results are shown as stored."""

    list_display = ("id", "tool", "status", "owner", "site", "created_at", "last_updated_at")
    list_filter = ("status", "site")
    search_fields = ("=id", "tool", "owner")
    ordering = ("-created_at",)
