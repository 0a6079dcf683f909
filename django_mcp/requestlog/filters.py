"""The request-log admin's filters: none of them reads the table to list its choices.

Why: Django's default filter for a plain text column lists ``SELECT DISTINCT`` values of
the whole table, a full scan at millions of rows. The method filter lists the methods of
the protocol instead, and the time window filter (the newest 24 hours unless another
window is chosen) keeps every list, filter and search on a recent slice of the log, which
the ``started_at`` indexes reach directly. A date or its parts in the query string
(``?started_at__date=``) is read as a range of ``started_at`` for the same reason
(:func:`calendar_range`).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any, Final

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.utils import timezone
from django.utils.dateparse import parse_date

from django_mcp.admin_guards import moment
from django_mcp.protocol import methods
from django_mcp.requestlog.models import RequestLog, column_length

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from django.contrib.admin.filters import _ListFilterChoices
    from django.contrib.admin.views.main import ChangeList
    from django.db.models import QuerySet
    from django.http import HttpRequest

#: The longest method the request log's ``method`` column holds.
_METHOD_LENGTH: Final = column_length(RequestLog, "method") or 0


def could_be_stored(value: str, max_length: int) -> bool:
    """Whether a text column of ``max_length`` could hold ``value`` as the log stores it.

    A value from the URL (a filter, a search) that no row can hold matches nothing, and is
    not sent to the database: PostgreSQL refuses NUL in a query (rows are stored with NUL
    replaced), and SQLite refuses a ``LIKE`` pattern over 50,000 bytes.
    """
    return "\x00" not in value and len(value) <= max_length


#: The windows offered, newest first; ``all`` has no bound.
WINDOWS: Final = {
    "1h": ("Last hour", datetime.timedelta(hours=1)),
    "24h": ("Last 24 hours", datetime.timedelta(hours=24)),
    "7d": ("Last 7 days", datetime.timedelta(days=7)),
    "30d": ("Last 30 days", datetime.timedelta(days=30)),
    "all": ("Any time", None),
}
DEFAULT_WINDOW: Final = "24h"

#: The methods a client may send (and the legacy ``initialize``, refused but recorded).
METHODS: Final = (
    methods.TOOLS_CALL,
    methods.TOOLS_LIST,
    methods.RESOURCES_READ,
    methods.RESOURCES_LIST,
    methods.RESOURCES_TEMPLATES_LIST,
    methods.PROMPTS_GET,
    methods.PROMPTS_LIST,
    methods.COMPLETION_COMPLETE,
    methods.SUBSCRIPTIONS_LISTEN,
    methods.SERVER_DISCOVER,
    methods.NOTIFICATION_CANCELLED,
    methods.INITIALIZE,
)


#: The widest span a list may read when it filters or sorts on a column no index leads
#: with: the widest window offered (30 days), and a month drilled down to.
WIDEST_SPAN: Final = datetime.timedelta(days=31)


def is_bounded(query: Mapping[str, Any]) -> bool:
    """Whether the changelist the query string ``query`` asks for lists a span of at most
    :data:`WIDEST_SPAN`: a window other than "Any time" (none chosen is the last 24
    hours), or ``started_at`` lookups that narrow it as much (a day, a month, a range).
    Only such a list may be filtered or sorted on columns no index leads with: the window
    index reads the span and the database filters or sorts only that; a lower bound in
    the year 2000 bounds nothing."""
    chosen = query.get(StartedWithinFilter.parameter_name)
    if chosen not in WINDOWS:
        dated = any(key.startswith("started_at") for key in query)
        chosen = "all" if dated else DEFAULT_WINDOW
    if WINDOWS[str(chosen)][1] is not None:
        return True
    span = lookup_span(query)
    return span is not None and span <= WIDEST_SPAN


def lookup_span(query: Mapping[str, Any]) -> datetime.timedelta | None:
    """How long a span the ``started_at`` lookups of ``query`` leave, or None when they
    leave it open (or cannot be read: the lookup checks refuse those anyway)."""
    spans: list[datetime.timedelta] = []
    if "started_at" in query or "started_at__date" in query:
        spans.append(datetime.timedelta(days=1))
    if "started_at__year" in query:
        if "started_at__day" in query:
            spans.append(datetime.timedelta(days=1))
        elif "started_at__month" in query:
            spans.append(datetime.timedelta(days=31))
    lower = _moment(query, "started_at__gte") or _moment(query, "started_at__gt")
    if lower is not None:
        upper = _moment(query, "started_at__lte") or _moment(query, "started_at__lt")
        # An aware now: the moments are aware, and ``timezone.now()`` is naive without
        # ``USE_TZ`` (subtracting one from the other was a TypeError, a 500).
        spans.append((upper or datetime.datetime.now(datetime.UTC)) - lower)
    return min(spans, default=None)


def _moment(query: Mapping[str, Any], key: str) -> datetime.datetime | None:
    """The aware date and time of lookup ``key``, read as the lookup checks and the ORM
    read it (:func:`~django_mcp.admin_guards.moment`), if it is one."""
    value = query.get(key)
    return moment(value) if isinstance(value, str) else None


#: The ``started_at`` lookups of a calendar date or of its parts. Django answers them with a
#: function of the column (``started_at::date``, ``EXTRACT(day ...)``), which no index
#: serves: on PostgreSQL ``?started_at__date=`` read every row of the log.
#: :func:`calendar_range` reads them as a range of time, which the window index answers.
CALENDAR_LOOKUPS: Final = (
    "started_at__date",
    "started_at__year",
    "started_at__month",
    "started_at__day",
)


def calendar_lookups_allowed(query: Mapping[str, Any]) -> bool:
    """Whether the calendar lookups of ``query`` name one span of time: a date or its
    parts but not both, a month only within a year and a day only within a month (a
    month or a day of every year is no range of time). Each is given at most once
    (:func:`given_once`)."""
    year, month, day = (f"started_at__{part}" in query for part in ("year", "month", "day"))
    if "started_at__date" in query and (year or month or day):
        return False
    return (not month or year) and (not day or month)


def given_once(query: Mapping[str, Any], key: str) -> bool:
    """Whether ``query`` (the request's ``QueryDict``) holds at most one value for ``key``.

    Why: the changelist matches any of a lookup's several values (Django ORs them), but
    the span checks (:func:`is_bounded`) read one, the last: ``?started_at__gte=`` in the
    year 2000 and again yesterday was a span of a day, and let a filter or a sort that no
    index answers read the whole log. A ``started_at`` lookup is therefore taken once.
    """
    getlist = getattr(query, "getlist", None)
    if getlist is not None:
        return len(getlist(key)) <= 1
    return True


def calendar_range(params: dict[str, Any]) -> tuple[datetime.datetime, datetime.datetime] | None:
    """Pop the calendar lookups (:data:`CALENDAR_LOOKUPS`, values already checked by the
    admin's ``lookup_allowed``) from the changelist's lookup ``params`` and return the
    ``[start, end)`` they name in the current time zone, as Django's ``__date`` and
    ``__year`` lookups read them; None when there are none. A day its month lacks (the
    31st of February) is Django's "?e=1" for an incorrect lookup."""
    found = {key: params.pop(key) for key in CALENDAR_LOOKUPS if key in params}
    if not found:
        return None
    try:
        start, end = _calendar_days({key: str(value[-1]) for key, value in found.items()})
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise IncorrectLookupParameters(exc) from exc
    if not settings.USE_TZ:  # naive local times, as the column holds them
        return start, end
    zone = timezone.get_current_timezone()
    return timezone.make_aware(start, zone), timezone.make_aware(end, zone)


def _calendar_days(values: dict[str, str]) -> tuple[datetime.datetime, datetime.datetime]:
    """The naive midnights that start and end the date, day, month or year named."""
    if "started_at__date" in values:
        day = parse_date(values["started_at__date"].strip())
        if day is None:
            raise ValueError("not a date")
        start, end = day, day + datetime.timedelta(days=1)
    else:
        year = int(values["started_at__year"])
        month = int(values.get("started_at__month", 1))
        if "started_at__day" in values:
            start = datetime.date(year, month, int(values["started_at__day"]))
            end = start + datetime.timedelta(days=1)
        elif "started_at__month" in values:
            start = datetime.date(year, month, 1)
            end = (start + datetime.timedelta(days=32)).replace(day=1)
        else:
            start, end = datetime.date(year, 1, 1), datetime.date(year + 1, 1, 1)
    midnight = datetime.time()
    return datetime.datetime.combine(start, midnight), datetime.datetime.combine(end, midnight)


class StartedWithinFilter(admin.SimpleListFilter):
    """Rows started within a window: the last 24 hours unless another is chosen."""

    title = "started"
    parameter_name = "started"

    def __init__(
        self, request: HttpRequest, params: dict[str, Any], model: Any, model_admin: Any
    ) -> None:
        # A date chosen another way (``?started_at__gte=...``) replaces the default window.
        self.dated = any(key.startswith("started_at") for key in request.GET)
        super().__init__(request, params, model, model_admin)

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(key, label) for key, (label, _) in WINDOWS.items()]

    def value(self) -> str:
        chosen = super().value()
        if chosen in WINDOWS:
            return str(chosen)
        return "all" if self.dated else DEFAULT_WINDOW

    def choices(self, changelist: ChangeList) -> Iterator[_ListFilterChoices]:
        # No "All" entry: "Any time" is one of the windows, and none chosen means 24 hours.
        for key, label in self.lookup_choices:
            yield {
                "selected": self.value() == key,
                "query_string": changelist.get_query_string({self.parameter_name: key}),
                "display": label,
            }

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        span = WINDOWS[self.value()][1]
        if span is None:
            return queryset
        return queryset.filter(started_at__gte=timezone.now() - span)


class MethodFilter(admin.SimpleListFilter):
    """The protocol's methods, listed without reading the table."""

    title = "method"
    parameter_name = "method"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(name, name) for name in METHODS]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        chosen = self.value()
        if chosen is None:
            return queryset
        if not could_be_stored(chosen, _METHOD_LENGTH):
            return queryset.none()
        return queryset.filter(method=chosen)
