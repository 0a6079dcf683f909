"""The request log's hourly summaries: counted in the writer thread, rebuilt from rows.

Why: the dashboard answered by reading every request of its window, so its cost grew with
traffic (9 s for 30 days of 10 million rows). :class:`~.models.RequestLogHour` holds, per
hour and (site, method, target, error code), the requests, the errors, the total duration
and a latency histogram (:mod:`.histogram`); the dashboard reads those rows only.

How they are written: each flush of the recorder hands every request it took from its
buffers (the rows it just wrote, and the requests the log's sampling or ``"errors"`` mode
left out, so the summaries count every request, not only the logged ones) to :func:`add`.
It adds them up in Python into one :class:`Tally` per key, then sends one statement per
chunk, ``INSERT ... ON CONFLICT (key) DO UPDATE SET count = count + excluded.count, ...``,
which adds to an existing hour rather than replacing it: batches, flushes and processes
add up, and concurrent writers never lose an update (the row lock of the conflict
serialises them). PostgreSQL and SQLite (3.24 and later) both take this syntax; the vendor
SQL of the summaries is in this module only.

:func:`rebuild` recounts hours from the rows (``manage.py mcp_rebuild_log_summaries``), in
one ``INSERT ... SELECT ... GROUP BY`` whose histogram bucket is a binary search of
:data:`~.histogram.BOUNDS` written as nested ``CASE`` (six comparisons per row), so a
duration falls in the same bucket as when the writer counted it.
"""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from django.db import NotSupportedError, connections, transaction

from django_mcp.requestlog import histogram
from django_mcp.requestlog.models import RequestLog, RequestLogHour
from django_mcp.requestlog.sanitise import clean_text

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from django.db.backends.base.base import BaseDatabaseWrapper

    from django_mcp.requestlog.records import RequestRecord

logger = logging.getLogger("django_mcp")

#: (hour, site, method, target, error code): the unique key of a summary row.
Key = tuple[datetime.datetime, str, str, str, int]
KEY: Final = ("hour", "site", "method", "target", "error_code")
COUNTERS: Final = ("count", "errors", "duration_sum", *histogram.COLUMNS)
#: The outcomes the dashboard counts as errors (as its ``ERRORS`` filter on the rows did).
ERROR_OUTCOMES: Final = ("tool_error", "protocol_error")
VENDORS: Final = ("postgresql", "sqlite")
_UTC: Final = datetime.UTC


@dataclass(slots=True)
class Tally:
    """What one key's requests add to its summary row."""

    count: int = 0
    errors: int = 0
    duration_sum: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * histogram.BUCKETS)

    def merge(self, other: Tally) -> None:
        self.count += other.count
        self.errors += other.errors
        self.duration_sum += other.duration_sum
        self.buckets = [a + b for a, b in zip(self.buckets, other.buckets, strict=True)]


def hour_of(when: datetime.datetime) -> datetime.datetime:
    """The start of ``when``'s hour, in UTC when ``when`` is aware (the rows' time zone)."""
    if when.tzinfo is not None and when.tzinfo is not _UTC:
        when = when.astimezone(_UTC)
    return when.replace(minute=0, second=0, microsecond=0)


def tally(records: Iterable[RequestRecord]) -> dict[Key, Tally]:
    """The records added up per key: the writer thread's only per-record work here.

    Keys are the records' own text; :func:`_storable` cleans them once per key (a request
    left out of the log by sampling was never sanitised).
    """
    raw: dict[tuple[Any, ...], Tally] = {}
    bucket = histogram.bucket
    for record in records:
        key = (
            hour_of(record.started_at),
            record.site,
            record.method,
            record.target,
            record.error_code or 0,
        )
        item = raw.get(key)
        if item is None:
            item = raw[key] = Tally()
        duration = record.duration_ms
        item.count += 1
        item.duration_sum += duration
        item.buckets[bucket(duration)] += 1
        if record.outcome in ERROR_OUTCOMES:
            item.errors += 1
    return _storable(raw)


#: The summary's text columns' lengths (the request log's own: a logged key fits both).
_LIMITS: Final = {"site": 100, "method": 100, "target": 255}


def _storable(raw: dict[tuple[Any, ...], Tally]) -> dict[Key, Tally]:
    """Keys with text any database stores (two raw keys may clean to one: merged)."""
    out: dict[Key, Tally] = {}
    for (hour, site, method, target, code), item in raw.items():
        key: Key = (
            hour,
            clean_text(site, _LIMITS["site"]),
            clean_text(method, _LIMITS["method"]),
            clean_text(target, _LIMITS["target"]),
            code,
        )
        found = out.get(key)
        if found is None:
            out[key] = item
        else:
            found.merge(item)
    return out


def add(records: Iterable[RequestRecord], alias: str) -> int:
    """Add ``records`` to their summary rows on database ``alias``; how many keys changed.

    One transaction: either every key of the batch is added or none is, so a failure is
    counted once by the caller and never half-applied.
    """
    tallies = tally(records)
    if tallies:
        upsert(tallies, alias)
    return len(tallies)


def add_or_log(records: Sequence[RequestRecord], alias: str) -> int:
    """:func:`add` for the recorder's flush, after the rows: how many requests it could not
    count (all of them or none), each failure logged, never raised (the rows are written;
    the writer thread must go on)."""
    if not records:
        return 0
    try:
        add(records, alias)
    except Exception as exc:  # a boundary, see above
        logger.error(
            "django-mcp could not add %d requests to the request log's hourly summaries "
            "(%s: %a); the dashboard will not count them.",
            len(records),
            type(exc).__name__,
            str(exc),
        )
        return len(records)
    return 0


def upsert(tallies: dict[Key, Tally], alias: str) -> None:
    """``INSERT ... ON CONFLICT DO UPDATE`` adding to the counters, in as few statements as
    the backend's parameter limit allows."""
    connection = connections[alias]
    _require_upsert(connection)
    quote = connection.ops.quote_name
    table = quote(RequestLogHour._meta.db_table)
    columns = (*KEY, *COUNTERS)
    added = ", ".join(f"{quote(c)} = {table}.{quote(c)} + excluded.{quote(c)}" for c in COUNTERS)
    head = f"INSERT INTO {table} ({', '.join(quote(c) for c in columns)}) VALUES "
    tail = f" ON CONFLICT ({', '.join(quote(c) for c in KEY)}) DO UPDATE SET {added}"
    one = "(" + ", ".join(["%s"] * len(columns)) + ")"
    hour_field = RequestLogHour._meta.get_field("hour")
    limit = connection.features.max_query_params or 65_535
    per_statement = max(1, limit // len(columns))
    rows = [
        [hour_field.get_db_prep_value(key[0], connection), *key[1:], *_counters(item)]
        for key, item in sorted(tallies.items(), key=lambda pair: pair[0])
    ]
    # Sorted keys: two writers lock the rows they update in the same order (no deadlock).
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            cursor.execute(
                head + ", ".join([one] * len(chunk)) + tail, [v for row in chunk for v in row]
            )


def _counters(item: Tally) -> list[Any]:
    """The values of :data:`COUNTERS`, in order."""
    return [item.count, item.errors, item.duration_sum, *item.buckets]


def _require_upsert(connection: BaseDatabaseWrapper) -> None:
    if connection.vendor not in VENDORS:
        raise NotSupportedError(
            "django-mcp's request log summaries need PostgreSQL or SQLite, "
            f"not {connection.vendor}."
        )


# Rebuilding from the rows -------------------------------------------------------------


def _bucket_sql(column: str, low: int, high: int, params: list[float]) -> str:
    """A nested ``CASE`` giving :func:`histogram.bucket` of ``column`` (a binary search)."""
    if low == high:
        return str(low)
    middle = (low + high + 1) // 2  # bucket < middle  <=>  value < BOUNDS[middle - 1]
    params.append(histogram.BOUNDS[middle - 1])
    below = _bucket_sql(column, low, middle - 1, params)
    above = _bucket_sql(column, middle, high, params)
    return f"CASE WHEN {column} < %s THEN {below} ELSE {above} END"


def rebuild(since: datetime.datetime | None, alias: str) -> int:
    """Recount the summaries of every hour from ``since``'s (all hours when None) from the
    rows of the request log, replacing what was there; how many summary rows it wrote.

    Counts rows: requests the log's sampling left out were counted by the writer but are
    not in the rows, so a rebuilt hour of a sampled log shows only the logged requests.
    """
    connection = connections[alias]
    _require_upsert(connection)
    quote = connection.ops.quote_name
    log = quote(RequestLog._meta.db_table)
    summary = quote(RequestLogHour._meta.db_table)
    if connection.vendor == "postgresql":
        hour = f"date_trunc('hour', {quote('started_at')})"
    else:  # SQLite stores UTC text; this is the text Django writes for the hour itself
        hour = f"strftime('%%Y-%%m-%%d %%H:00:00', {quote('started_at')})"
    params: list[Any] = []
    bucket = _bucket_sql(quote("duration_ms"), 0, histogram.BUCKETS - 1, params)
    errors = ", ".join(f"'{outcome}'" for outcome in ERROR_OUTCOMES)
    where = ""
    old = RequestLogHour.objects.using(alias)
    if since is not None:
        start = hour_of(since)
        where = f"WHERE {quote('started_at')} >= %s"
        params.append(RequestLog._meta.get_field("started_at").get_db_prep_value(start, connection))
        old = old.filter(hour__gte=start)
    sums = ", ".join(f"SUM(CASE WHEN b = {i} THEN n ELSE 0 END)" for i in range(histogram.BUCKETS))
    names = ", ".join(quote(c) for c in (*KEY, *COUNTERS))
    sql = (
        f"INSERT INTO {summary} ({names}) "
        f"SELECT h, site, method, target, code, SUM(n), SUM(e), SUM(s), {sums} FROM ("
        f"SELECT {hour} AS h, {quote('site')} AS site, {quote('method')} AS method, "
        f"{quote('target')} AS target, COALESCE({quote('error_code')}, 0) AS code, "
        f"{bucket} AS b, COUNT(*) AS n, "
        f"SUM(CASE WHEN {quote('outcome')} IN ({errors}) THEN 1 ELSE 0 END) AS e, "
        f"SUM({quote('duration_ms')}) AS s FROM {log} {where} GROUP BY 1, 2, 3, 4, 5, 6"
        f") AS g GROUP BY h, site, method, target, code"
    )
    with transaction.atomic(using=alias):
        old.delete()
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return int(cursor.rowcount)


def prune(before: datetime.datetime, alias: str) -> int:
    """Delete the summaries of hours that started before ``before``; how many rows."""
    deleted, _ = RequestLogHour.objects.using(alias).filter(hour__lt=before).delete()
    return deleted
