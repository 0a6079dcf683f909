"""The dashboard's numbers: sums over the hourly summaries of a bounded window, in SQL.

Why summaries: reading every request of a window made the dashboard's cost grow with
traffic (9 s for 30 days of a 10-million-row log). Every query here reads
:class:`~django_mcp.requestlog.models.RequestLogHour` only, never the request log's rows:
the hours from the start of the window's first hour, filtered on ``hour`` (the leading
column of the summaries' unique key) and summed in the database (``Sum``, ``TruncDay``).
Their cost grows with the hours and distinct targets of the window, not with the requests.

The 95th percentile comes from the summaries' latency histogram
(:mod:`django_mcp.requestlog.histogram`): the geometric middle of the bucket holding the
nearest-rank p95, within a factor of ``sqrt(1.25)`` (about 12 %) of the exact value; the
page marks it "≈". The window starts on the hour: a 24-hour window shows up to 25 hours.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from django.db.models import Q, QuerySet, Sum
from django.db.models.functions import TruncDay, TruncHour
from django.utils import timezone

from django_mcp.requestlog import histogram
from django_mcp.requestlog.models import RequestLogHour, ServedRevision
from django_mcp.requestlog.summaries import hour_of

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


def in_window(since: datetime, site: str | None = None) -> QuerySet[RequestLogHour]:
    """The summaries of every hour from ``since``'s on (of one site)."""
    rows = RequestLogHour.objects.filter(hour__gte=hour_of(since)).order_by()
    return rows.filter(site=site) if site else rows


def buckets(rows: QuerySet[RequestLogHour], bucket: str) -> list[Bucket]:
    """Requests and errors per hour or day, oldest first."""
    trunc = TruncHour if bucket == "hour" else TruncDay
    grouped = (
        rows.annotate(at=trunc("hour"))
        .values("at")
        .annotate(total=Sum("count"), errors=Sum("errors"))
        .order_by("at")
    )
    return [Bucket(row["at"], row["total"], row["errors"]) for row in grouped]


def fill(found: list[Bucket], since: datetime, bucket: str, now: datetime) -> list[Bucket]:
    """Every bucket of the window, empty ones included, so the time axis is even."""
    step = timedelta(hours=1) if bucket == "hour" else timedelta(days=1)
    start = timezone.localtime(since).replace(minute=0, second=0, microsecond=0)
    if bucket == "day":
        start = start.replace(hour=0)
    by_time = {item.at: item for item in found}
    out: list[Bucket] = []
    at = start
    while at <= now and len(out) < 24 * 31:
        out.append(by_time.get(at, Bucket(at, 0, 0)))
        at += step
    return out


def per_target(rows: QuerySet[RequestLogHour]) -> list[TargetStats]:
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


def error_codes(rows: QuerySet[RequestLogHour]) -> list[dict[str, Any]]:
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
