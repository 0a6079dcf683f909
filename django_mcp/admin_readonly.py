"""``ReadOnlyAdmin``: the admin of records that only django-mcp writes (the request log,
MCP tasks): shown, never added, changed or deleted from the admin. One class for both,
below the layers that use it (it imports nothing of django_mcp)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin

if TYPE_CHECKING:
    from django.http import HttpRequest

    _ModelAdmin = admin.ModelAdmin[Any]
else:  # ModelAdmin is generic only in the type stubs
    _ModelAdmin = admin.ModelAdmin


class ReadOnlyAdmin(_ModelAdmin):
    """View permission only: no add, change or delete, whoever asks."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
