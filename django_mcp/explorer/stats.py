"""The dashboard's numbers: aggregates over a bounded window of the request log, in SQL.

Every query filters on ``started_at`` within a window of at most :data:`WINDOWS`' largest
value, and groups in the database (``TruncHour``/``TruncDay``, ``Count``, ``Avg``), never
a Python loop over rows. The queries read only the columns of the request log's window
index (``django_mcp_rl_window_idx``: ``started_at`` first, then every column read here) and
count ``*`` rather than ``id``, so PostgreSQL answers each from the index alone (an
index-only scan of the window), never reading the table's rows. Three scans of the window
per page: the timeline, the per-target figures (with the p95 in the same query on
PostgreSQL) and the error codes. Their cost grows with the requests in the window, not with
the table (docs/benchmark.md, "The request-log admin").

The 95th percentile is exact where the database can compute it: on PostgreSQL,
``percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms)``. SQLite has no percentile
aggregate, so there the value is the nearest-rank p95 of each of the :data:`TOP` most-called
targets, read with one ``ORDER BY duration_ms LIMIT 1 OFFSET k`` query per target: exact by
the nearest-rank definition, but not interpolated like PostgreSQL's, and limited to the
most-called targets (a rarely called slow tool is missed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from django.db import connection
from django.db.models import Aggregate, Avg, Count, F, FloatField, Q, QuerySet, Value
from django.db.models.functions import TruncDay, TruncHour
from django.utils import timezone

from django_mcp.requestlog.models import Outcome, RequestLog, ServedRevision

#: The windows a dashboard may show: name -> (length, bucket). Bounded on purpose.
WINDOWS: Final[dict[str, tuple[timedelta, str]]] = {
    "24h": (timedelta(hours=24), "hour"),
    "7d": (timedelta(days=7), "day"),
    "30d": (timedelta(days=30), "day"),
}
DEFAULT_WINDOW: Final = "24h"
#: How many rows the "top" charts show.
TOP: Final = 10
ERRORS: Final = Q(outcome__in=(Outcome.TOOL_ERROR, Outcome.PROTOCOL_ERROR))


def count_errors() -> Count:
    """``COUNT(started_at) FILTER (WHERE outcome IN (errors))``: Django refuses a filter on
    ``COUNT(*)``, and ``started_at`` (never null) is in the window index, where ``id`` is
    not, so the count needs no table row."""
    return Count("started_at", filter=ERRORS)


class Percentile95(Aggregate):
    """PostgreSQL's ``percentile_cont(0.95) WITHIN GROUP (ORDER BY expr)``, an ordered-set
    aggregate (an ``Aggregate``, so the column is not added to ``GROUP BY``)."""

    function = "percentile_cont"
    template = "%(function)s(0.95) WITHIN GROUP (ORDER BY %(expressions)s)"
    output_field = FloatField()


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
    p95_ms: float | None = None

    @property
    def label(self) -> str:
        return f"{self.method} {self.target}".strip() or "(unparsed)"


def window(name: str | None, now: datetime | None = None) -> tuple[str, datetime, str]:
    """``(name, since, bucket)`` for a window name; an unknown name gets the default."""
    key = name if name in WINDOWS else DEFAULT_WINDOW
    length, bucket = WINDOWS[key]
    return key, (now or timezone.now()) - length, bucket


def in_window(since: datetime, site: str | None = None) -> QuerySet[RequestLog]:
    rows = RequestLog.objects.filter(started_at__gte=since).order_by()
    return rows.filter(site=site) if site else rows


def buckets(rows: QuerySet[RequestLog], bucket: str) -> list[Bucket]:
    """Requests and errors per hour or day, oldest first."""
    trunc = TruncHour if bucket == "hour" else TruncDay
    grouped = (
        rows.annotate(at=trunc("started_at"))
        .values("at")
        .annotate(total=Count("*"), errors=count_errors())
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


def per_target(rows: QuerySet[RequestLog]) -> list[TargetStats]:
    """Calls, errors, mean latency and p95 per (method, target), most called first: one
    grouped query on PostgreSQL; on SQLite the p95 of the :data:`TOP` most called after."""
    exact_p95 = connection.vendor == "postgresql"
    p95: Aggregate | Value = (
        Percentile95(F("duration_ms")) if exact_p95 else Value(None, output_field=FloatField())
    )
    grouped = (
        rows.exclude(method="")
        .values("method", "target")
        .annotate(calls=Count("*"), errors=count_errors(), avg=Avg("duration_ms"), p95=p95)
        .order_by("-calls", "method", "target")
    )
    stats = [
        TargetStats(
            row["method"],
            row["target"],
            row["calls"],
            row["errors"],
            float(row["avg"] or 0),
            None if row["p95"] is None else float(row["p95"]),
        )
        for row in grouped[: TOP * 5]
    ]
    if not exact_p95:
        stats = [
            _with_nearest_rank_p95(rows, item) if i < TOP else item for i, item in enumerate(stats)
        ]
    return stats


def _with_nearest_rank_p95(rows: QuerySet[RequestLog], item: TargetStats) -> TargetStats:
    """SQLite: the nearest-rank p95 of one target (``ceil(0.95 n)``-th smallest)."""
    offset = max(math.ceil(0.95 * item.calls) - 1, 0)
    value = (
        rows.filter(method=item.method, target=item.target)
        .order_by("duration_ms")
        .values_list("duration_ms", flat=True)[offset : offset + 1]
    )
    found = list(value)
    return TargetStats(
        item.method,
        item.target,
        item.calls,
        item.errors,
        item.avg_ms,
        float(found[0]) if found else None,
    )


def error_codes(rows: QuerySet[RequestLog]) -> list[dict[str, Any]]:
    """How often each error code was answered in the window, most frequent first."""
    grouped = (
        rows.filter(error_code__isnull=False)
        .values("error_code")
        .annotate(count=Count("*"))
        .order_by("-count")
    )
    return [dict(row) for row in grouped[:TOP]]


def best_effort_revisions(since: datetime) -> list[ServedRevision]:
    """Revisions served best-effort, per client, seen within the window."""
    rows = ServedRevision.objects.filter(last_seen__gte=since).order_by("-count")
    return list(rows[: TOP * 2])
