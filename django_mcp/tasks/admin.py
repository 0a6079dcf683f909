"""The read-only admin of MCP tasks, shown beside the request log: tasks are changed only
by their clients and workers, and purged by ``manage.py mcp_purge_tasks``.

A busy site keeps many tasks until their TTL passes, so the list is built like the request
log's: newest first from the ``created_at`` index, and never a ``COUNT(*)`` of the whole
table (:mod:`django_mcp.admin_pagination`), nor facet counts of every filter choice."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.contrib import admin

from django_mcp.admin_guards import Check, GuardedAdmin, anything, is_boolean
from django_mcp.admin_pagination import EstimatedCountPaginator, SettledCountChangeList
from django_mcp.admin_readonly import ReadOnlyAdmin
from django_mcp.tasks.models import MCPTask
from django_mcp.tasks.wire import shown_message

if TYPE_CHECKING:
    from django.contrib.admin.views.main import ChangeList
    from django.http import HttpRequest


@admin.register(MCPTask)
class MCPTaskAdmin(GuardedAdmin, ReadOnlyAdmin):
    """View only; arguments, answers and results are shown as stored. The query string takes
    the two filters' parameters and equality on them, never NUL (:class:`GuardedAdmin`)."""

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
    # Not "site": its filter lists every value with SELECT DISTINCT site over the whole
    # table on every page (no index serves it). ``?site=`` still filters.
    list_filter = ("status",)
    search_fields = ("=id", "tool", "owner")
    ordering = ("-created_at",)
    readonly_fields = ("client_status_message",)
    paginator = EstimatedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return SettledCountChangeList

    def guarded_lookups(self) -> Mapping[str, Check]:
        columns = ("status", "site")
        found: dict[str, Check] = {f"{c}__isnull": is_boolean for c in columns}
        found.update({lookup: anything for c in columns for lookup in (c, f"{c}__exact")})
        return found

    @admin.display(description="status message (as clients see it)")
    def client_status_message(self, task: MCPTask) -> str:
        """What ``tasks/get`` shows, "waiting for a worker" included, which the stored
        ``status_message`` (the tool's own) does not hold."""
        return shown_message(task)
