"""Read-only admin for the request log and the best-effort revision tally (docs/guides/records.md).

Both tables are evidence written by the recorder, so the admin can look but never add, edit
or delete: a log an operator can edit proves nothing. Pruning is the job of the
``mcp_prune_logs`` management command. The request log can grow to millions of rows, so the
changelist skips the exact total count and its filters stay on indexed or low-cardinality
columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin

from django_mcp.requestlog.models import RequestLog, ServedRevision

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


@admin.register(RequestLog)
class RequestLogAdmin(ReadOnlyAdmin):
    list_display = (
        "started_at",
        "method",
        "target",
        "outcome",
        "error_code",
        "http_status",
        "duration",
        "client",
        "declared_revision",
        "served_how",
        "username",
    )
    list_display_links = ("started_at",)
    list_filter = ("method", "outcome", "served_how", "declared_revision", "site")
    date_hierarchy = "started_at"
    search_fields = ("target", "client_name", "=request_id", "username")
    ordering = ("-started_at",)
    show_full_result_count = False  # COUNT(*) over a large log is slow on PostgreSQL
    list_per_page = 100
    fieldsets = (
        (None, {"fields": ("started_at", "site", "method", "target", "request_id")}),
        ("Outcome", {"fields": ("outcome", "error_code", "http_status", "duration_ms")}),
        (
            "Revision",
            {"fields": ("declared_revision", "served_revision", "served_how")},
        ),
        ("Caller", {"fields": ("client_name", "client_version", "user", "username")}),
        ("Params", {"fields": ("params",), "classes": ("collapse",)}),
    )

    @admin.display(description="duration", ordering="duration_ms")
    def duration(self, obj: RequestLog) -> str:
        return f"{obj.duration_ms:.1f} ms"

    @admin.display(description="client", ordering="client_name")
    def client(self, obj: RequestLog) -> str:
        return f"{obj.client_name} {obj.client_version}".strip()


@admin.register(ServedRevision)
class ServedRevisionAdmin(ReadOnlyAdmin):
    list_display = ("revision", "client_name", "client_version", "count", "first_seen", "last_seen")
    list_filter = ("revision",)
    date_hierarchy = "last_seen"
    search_fields = ("revision", "client_name", "client_version")
    ordering = ("-last_seen",)
