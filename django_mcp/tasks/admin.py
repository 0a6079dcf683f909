"""The read-only admin of MCP tasks, shown beside the request log: tasks are changed only
by their clients and workers, and purged by ``manage.py mcp_purge_tasks``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin

from django_mcp.tasks.models import MCPTask

if TYPE_CHECKING:
    from django.http import HttpRequest

    _ModelAdmin = admin.ModelAdmin[Any]
else:  # ModelAdmin is generic only in the type stubs
    _ModelAdmin = admin.ModelAdmin


@admin.register(MCPTask)
class MCPTaskAdmin(_ModelAdmin):
    """View only; arguments, answers and results are shown as stored."""

    list_display = ("id", "tool", "status", "owner", "site", "created_at", "last_updated_at")
    list_filter = ("status", "site")
    search_fields = ("=id", "tool", "owner")
    ordering = ("-created_at",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
