"""The dashboard's numbers: sums over the hourly summaries of a bounded window, in SQL.

Why summaries: reading every request of a window made the dashboard's cost grow with
traffic (9 s for 30 days of a 10-million-row log). Every query here reads the summaries
only, never the request log's rows: the 24-hour window the hours
(:class:`~django_mcp.requestlog.models.RequestLogHour`) from the start of its first hour,
the 7- and 30-day windows the UTC days (:class:`~django_mcp.requestlog.models.RequestLogDay`)
from the start of their first day, filtered on the time column (the leading column of each
table's unique key) and summed in the database. Their cost grows with the hours or days
and distinct targets of the window, not with the requests.

The 95th percentile comes from the summaries' latency histogram
(:mod:`django_mcp.requestlog.histogram`): the geometric middle of the bucket holding the
nearest-rank p95, within a factor of ``sqrt(1.25)`` (about 12 %) of the exact value; the
page marks it "≈". A window starts on the hour (24 hours: up to 25 hours shown) or on a
UTC day (7 and 30 days: up to a day more; the chart's days are UTC days).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from django_mcp.requestlog import histogram
from django_mcp.requestlog.filters import could_be_stored
from django_mcp.requestlog.models import (
    RequestLogDay,
    RequestLogHour,
    ServedRevision,
    column_length,
)
from django_mcp.requestlog.tallies import day_of, hour_of

#: The longest site name the summaries' ``site`` column holds.
_SITE_LENGTH: Final = column_length(RequestLogHour, "site") or 0

#: The windows a dashboard may show: name -> (length, bucket). Bounded on purpose.
WINDOWS: Final[dict[str, tuple[timedelta, str]]] = {
    "24h": (timedelta(hours=24), "hour"),
    "7d": (timedelta(days=7), "day"),
    "30d": (timedelta(days=30), "day"),
}
DEFAULT_WINDOW: Final = "24h"
#: How many rows the "top" charts show.
TOP: Final = 10


@dataclass(frozen=True)
class Bucket:
    at: datetime
    total: int
    errors: int


@dataclass(frozen=True)
class TargetStats:
    method: str
    target: str
    calls: int
    errors: int
    avg_ms: float
    #: Approximate (the histogram's bucket, see the module docstring).
    p95_ms: float | None = None

    @property
    def label(self) -> str:
        return f"{self.method} {self.target}".strip() or "(unparsed)"


def window(name: str | None, now: datetime | None = None) -> tuple[str, datetime, str]:
    """``(name, since, bucket)`` for a window name; an unknown name gets the default."""
    key = name if name in WINDOWS else DEFAULT_WINDOW
    length, bucket = WINDOWS[key]
    return key, (now or timezone.now()) - length, bucket


def in_window(since: datetime, site: str | None = None, bucket: str = "hour") -> QuerySet[Any]:
    """The summaries of every hour from ``since``'s on, or of every UTC day from ``since``'s
    on (of one site)."""
    rows: QuerySet[Any]
    if bucket == "hour":
        rows = RequestLogHour.objects.filter(hour__gte=hour_of(since))
    else:
        rows = RequestLogDay.objects.filter(day__gte=day_of(since))
    rows = rows.order_by()
    if site and not could_be_stored(site, _SITE_LENGTH):
        return rows.none()  # a site no row can name (a NUL from the URL): no query
    return rows.filter(site=site) if site else rows


def buckets(rows: QuerySet[Any], bucket: str) -> list[Bucket]:
    """Requests and errors per hour or day, oldest first."""
    column = "hour" if bucket == "hour" else "day"
    grouped = (
        rows.values(column).annotate(total=Sum("count"), errors=Sum("errors")).order_by(column)
    )
    return [Bucket(row[column], row["total"], row["errors"]) for row in grouped]


def fill(found: list[Bucket], since: datetime, bucket: str, now: datetime) -> list[Bucket]:
    """Every bucket of the window, empty ones included, so the time axis is even."""
    step = timedelta(hours=1) if bucket == "hour" else timedelta(days=1)
    start = hour_of(since) if bucket == "hour" else day_of(since)
    by_time = {item.at: item for item in found}
    out: list[Bucket] = []
    at = start
    while at <= now and len(out) < 24 * 31:
        out.append(by_time.get(at, Bucket(at, 0, 0)))
        at += step
    return out


def per_target(rows: QuerySet[Any]) -> list[TargetStats]:
    """Calls, errors, mean latency and ≈p95 per (method, target), most called first: one
    grouped query for the counts, one for the histograms of the targets it returned."""
    grouped = list(
        rows.exclude(method="")
        .values("method", "target")
        .annotate(calls=Sum("count"), errors=Sum("errors"), total_ms=Sum("duration_sum"))
        .order_by("-calls", "method", "target")[: TOP * 5]
    )
    if not grouped:
        return []
    named = Q()
    for row in grouped:
        named |= Q(method=row["method"], target=row["target"])
    sums = {f"sum_{column}": Sum(column) for column in histogram.COLUMNS}
    found = (
        rows.filter(named)
        .values("method", "target")
        .annotate(**sums)
        .order_by()
        .values_list("method", "target", *sums)
    )
    histograms = {(row[0], row[1]): list(row[2:]) for row in found}
    return [
        TargetStats(
            row["method"],
            row["target"],
            row["calls"],
            row["errors"],
            float(row["total_ms"] or 0) / row["calls"] if row["calls"] else 0.0,
            histogram.p95(histograms.get((row["method"], row["target"]), [])),
        )
        for row in grouped
    ]


def error_codes(rows: QuerySet[Any]) -> list[dict[str, Any]]:
    """How often each error code was answered in the window, most frequent first."""
    grouped = (
        rows.exclude(error_code=0)
        .values("error_code")
        .annotate(count=Sum("count"))
        .order_by("-count", "error_code")
    )
    return [dict(row) for row in grouped[:TOP]]


def best_effort_revisions(since: datetime) -> list[ServedRevision]:
    """Revisions served best-effort, per client, seen within the window."""
    rows = ServedRevision.objects.filter(last_seen__gte=since).order_by("-count")
    return list(rows[: TOP * 2])
