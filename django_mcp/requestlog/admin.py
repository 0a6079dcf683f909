"""Read-only admin for the request log and the best-effort revision tally (docs/guides/records.md).

Both tables are evidence written by the recorder, so the admin can look but never add, edit
or delete: a log an operator can edit proves nothing. Pruning is the job of the
``mcp_prune_logs`` management command. The request log can grow to millions of rows, so
every page, filter and search is answered from an index: no count of the whole table
(:mod:`.pagination`), filters that list no distinct values and a recent time window by
default (:mod:`.filters`), prefix search on indexed columns (docs/guides/records.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from django_mcp.admin_guards import GuardedAdmin
from django_mcp.admin_pagination import EstimatedCountPaginator, SettledCountChangeList
from django_mcp.admin_readonly import ReadOnlyAdmin
from django_mcp.requestlog import lookups
from django_mcp.requestlog.filters import (
    CALENDAR_LOOKUPS,
    MethodFilter,
    StartedWithinFilter,
    calendar_lookups_allowed,
    calendar_range,
    could_be_stored,
    given_once,
    is_bounded,
)
from django_mcp.requestlog.models import RequestLog, ServedRevision, column_length

if TYPE_CHECKING:
    from django.contrib.admin.views.main import ChangeList
    from django.db.models import QuerySet
    from django.http import HttpRequest

#: The longest term a search can match: a prefix of the target or of the client's name.
_SEARCHED_LENGTH: Final = max(
    column_length(RequestLog, "target") or 0, column_length(RequestLog, "client_name") or 0
)


def _query(request: HttpRequest | None) -> Any:
    return {} if request is None else request.GET


class RequestLogChangeList(SettledCountChangeList):
    """The request log's changelist ("N entries" as the page settled the estimate), which
    reads a date or its parts in the query string as a range of ``started_at``
    (:func:`.filters.calendar_range`): Django's own ``__date``, ``__month`` and ``__day``
    lookups compare a function of the column, which no index answers."""

    calendar: tuple[Any, Any] | None = None

    def get_filters(self, request: HttpRequest) -> Any:
        specs, has_filters, remaining, duplicates, active = super().get_filters(request)
        self.calendar = calendar_range(remaining)
        return specs, has_filters, remaining, duplicates, active

    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> Any:
        found = super().get_queryset(request, exclude_parameters)
        if self.calendar is None:
            return found
        start, end = self.calendar
        return found.filter(started_at__gte=start, started_at__lt=end)


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
        "served_how",
        "permission_denied",
        "user_link",
        "remote_addr",
    )
    list_display_links = ("started_at",)
    # Each filter is answered by an index, and lists its choices without reading the table
    # (filters.py); the time window keeps every page on a recent, indexed slice.
    list_filter = (
        StartedWithinFilter,
        MethodFilter,
        "outcome",
        "served_how",
        "permission_denied",
    )
    # Prefix search on indexed columns (get_search_results): never a scan of the table.
    search_fields = ("^target", "^client_name")
    search_help_text = "Tool, prompt or resource name, or client name, starting with the text."
    ordering = ("-started_at",)
    paginator = EstimatedCountPaginator  # no COUNT(*) of the whole table per page
    show_full_result_count = False  # nor of the unfiltered table for "N total"
    show_facets = admin.ShowFacets.NEVER  # facet counts would count every filter choice
    list_per_page = 100
    fieldsets = (
        (None, {"fields": ("started_at", "site", "method", "target", "request_id")}),
        (
            "Outcome",
            {
                "fields": (
                    "outcome",
                    "error_code",
                    "error_message",
                    "permission_denied",
                    "http_status",
                    "duration",
                )
            },
        ),
        (
            "Revision",
            {"fields": ("declared_revision", "served_revision", "served_how")},
        ),
        (
            "Caller",
            {
                "fields": (
                    "client_name",
                    "client_version",
                    "user_link",
                    "username",
                    "remote_addr",
                    "user_agent",
                )
            },
        ),
        ("Params", {"fields": ("params",), "classes": ("collapse",)}),
    )
    readonly_fields = ("duration", "user_link")

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return RequestLogChangeList

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        """The filters' own lookups and the few the guide names (:mod:`.lookups`), never
        Django's default of any lookup on any column; and equality on a column no index
        leads with (``site``, ``declared_revision``, ``error_code``) only within a span of
        time (:func:`.filters.is_bounded`): over the whole log it reads every row. A
        ``started_at`` lookup is taken once, as the span checks read it
        (:func:`.filters.given_once`)."""
        if lookup in lookups.WINDOW_ONLY_LOOKUPS and not is_bounded(_query(request)):
            return False
        if lookup.startswith("started_at") and not given_once(_query(request), lookup):
            return False
        if lookup in CALENDAR_LOOKUPS and not calendar_lookups_allowed(_query(request)):
            return False
        return lookups.lookup_allowed(lookup, value)

    def get_sortable_by(self, request: HttpRequest) -> Any:
        """Every column within a span of time; over the whole log only the start time,
        which the window index is ordered by: sorting any other column would read, and
        sort, every row (the changelist then ignores ``?o=`` on the others too)."""
        if is_bounded(_query(request)):
            return super().get_sortable_by(request)
        return ("started_at",)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        """Rows whose target or client name starts with the term (case-sensitive, as names
        are): ``LIKE 'term%'``, which the ``varchar_pattern_ops`` indexes answer on
        PostgreSQL. Django's ``^`` would be ``UPPER(...) LIKE``, which no plain index serves."""
        term = search_term.strip()
        if not term:
            return queryset, False
        if not could_be_stored(term, _SEARCHED_LENGTH):
            return queryset.none(), False
        found = queryset.filter(Q(target__startswith=term) | Q(client_name__startswith=term))
        return found, False

    @admin.display(description="duration", ordering="duration_ms")
    def duration(self, obj: RequestLog) -> str:
        return format_duration(obj.duration_ms)

    @admin.display(description="client", ordering="client_name")
    def client(self, obj: RequestLog) -> str:
        return f"{obj.client_name} {obj.client_version}".strip()

    @admin.display(description="user", ordering="username")
    def user_link(self, obj: RequestLog) -> str:
        """The user's admin page when the user model is in this admin (no join: the id
        and the username snapshot are on the row); else the username."""
        name = obj.username or ("" if obj.user_id is None else str(obj.user_id))
        model = get_user_model()
        if obj.user_id is None or not self.admin_site.is_registered(model):
            return name
        opts = model._meta
        try:
            url = reverse(
                f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_change",
                args=(obj.user_id,),
            )
        except NoReverseMatch:
            return name
        return format_html('<a href="{}">{}</a>', url, name)


def format_duration(ms: float) -> str:
    """A duration for people: "0.30 ms", "12.5 ms", "1.24 s"."""
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


@admin.register(ServedRevision)
class ServedRevisionAdmin(GuardedAdmin, ReadOnlyAdmin):
    list_display = ("revision", "client_name", "client_version", "count", "first_seen", "last_seen")
    list_filter = ("revision",)
    date_hierarchy = "last_seen"
    search_fields = ("revision", "client_name", "client_version")
    ordering = ("-last_seen",)
    # One row per revision and client, pruned by age (mcp_prune_logs) but not by rate: a
    # client naming itself anew on every request adds a row each time.
    paginator = EstimatedCountPaginator
    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return SettledCountChangeList

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        """Only the revision filter and the date hierarchy's parts (:mod:`.lookups`): any
        other lookup, or a year Django's hierarchy cannot bound, is Django's 400. (A search
        that no row can match, NUL or too long, matches nothing: :class:`GuardedAdmin`.)"""
        return lookups.served_lookup_allowed(lookup, value)
