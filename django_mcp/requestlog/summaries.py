"""The request log's hourly and daily summaries: counted in the writer thread, rebuilt
from rows.

Why: the dashboard answered by reading every request of its window, so its cost grew with
traffic (9 s for 30 days of 10 million rows). :class:`~.models.RequestLogHour` holds, per
hour and (site, method, target, error code), the requests, the errors, the total duration
and a latency histogram (:mod:`.histogram`); :class:`~.models.RequestLogDay` the same per
UTC day, so a 30-day window reads 30 rows per key rather than 720. The dashboard reads
those rows only.

How they are written: each flush of the recorder hands every request it took from its
buffers (the rows it just wrote, and the requests the log's sampling or ``"errors"`` mode
left out, so the summaries count every request, not only the logged ones) to :func:`add`.
It adds them up in Python into one :class:`~.tallies.Tally` per hour and key (and sums
those per day, :mod:`.tallies`), then sends, in one transaction, one statement per table and chunk,
``INSERT ... ON CONFLICT (key) DO UPDATE SET count = count + excluded.count, ...``,
which adds to an existing row rather than replacing it: batches, flushes and processes add
up, and concurrent writers never lose an update (the row lock of the conflict serialises
them; keys are sent sorted, so two writers lock in the same order). PostgreSQL and SQLite
(3.24 and later) both take this syntax; MySQL and MariaDB get ``ON DUPLICATE KEY UPDATE``
with the same additions. The vendor SQL of the summaries is in this module only.

:func:`rebuild` recounts hours from the rows (``manage.py mcp_rebuild_log_summaries``), in
one ``INSERT ... SELECT ... GROUP BY`` whose histogram bucket is a binary search of
:data:`~.histogram.BOUNDS` written as nested ``CASE`` (six comparisons per row), so a
duration falls in the same bucket as when the writer counted it; then days from hours.
"""

from __future__ import annotations

import datetime
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from django.db import NotSupportedError, connections, transaction

from django_mcp.requestlog import histogram
from django_mcp.requestlog.models import LogSummary, RequestLog, RequestLogDay, RequestLogHour
from django_mcp.requestlog.records import Row
from django_mcp.requestlog.tallies import ERROR_OUTCOMES, KEY, Key, Tally, by_day, day_of, tally

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.models import QuerySet

logger = logging.getLogger("django_mcp")

COUNTERS: Final = ("count", "errors", "duration_sum", *histogram.COLUMNS)
VENDORS: Final = ("postgresql", "sqlite", "mysql")


@dataclass(frozen=True)
class Span:
    """One summary table and its time column."""

    model: type[LogSummary]
    column: str


HOURS: Final = Span(RequestLogHour, "hour")
DAYS: Final = Span(RequestLogDay, "day")


def add(records: Iterable[Row], alias: str) -> int:
    """Add ``records`` to their summary rows on database ``alias``; how many keys changed.

    One transaction: either every key of the batch is added or none is, so a failure is
    counted once by the caller and never half-applied.
    """
    hours = tally(records)
    if hours:
        with transaction.atomic(using=alias):
            upsert(HOURS, hours, alias)
            upsert(DAYS, by_day(hours), alias)
    return len(hours)


def add_or_log(records: Sequence[Row], alias: str) -> int:
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


def upsert(span: Span, tallies: dict[Key, Tally], alias: str) -> None:
    """``INSERT ... ON CONFLICT DO UPDATE`` adding to the counters (inside the caller's
    transaction: on SQLite a chunked batch is several statements).

    On PostgreSQL one statement with one parameter whatever the number of keys: the rows
    as one JSON array, unpacked by ``json_array_elements``. psycopg's client-side binding
    quotes every parameter in Python on every call: a ``VALUES`` list of a hundred keys
    (7,200 placeholders) cost 14 ms of the writer thread's CPU, and even one array per
    column (71 of them) cost about 0.7 ms per statement, one key or a hundred; one JSON
    text, encoded in C, costs a few microseconds. Elsewhere ``VALUES`` rows, as many per
    statement as the backend's parameter limit allows. The statement's text is built once
    per vendor and table (:func:`_statement`).
    """
    connection = connections[alias]
    _require_upsert(connection)
    sql = _statement(connection, span)
    # Sorted keys: two writers lock the rows they update in the same order (no deadlock).
    # No transaction of its own: :func:`add`, its only caller, runs both tables' upserts
    # in one (a savepoint per table would cost two more statements each, per flush).
    ordered = sorted(tallies.items(), key=lambda pair: pair[0])
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # ISO 8601 with its offset: the same instant whatever the session's time zone;
            # texts were made storable (:func:`_storable`), so they encode as they are.
            rows = [[at.isoformat(), *rest, *_counters(item)] for (at, *rest), item in ordered]
            cursor.execute(sql.postgresql, [json.dumps(rows, ensure_ascii=False)])
            return
        adapt = connection.ops.adapt_datetimefield_value
        rows = [[adapt(at), *rest, *_counters(item)] for (at, *rest), item in ordered]
        width = len(COUNTERS) + 1 + len(KEY)
        per_statement = max(1, (connection.features.max_query_params or 999) // width)
        one = "(" + ", ".join(["%s"] * width) + ")"
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            values = ", ".join([one] * len(chunk))
            cursor.execute(
                f"{sql.head}VALUES {values}{sql.tail}", [v for row in chunk for v in row]
            )


@dataclass(frozen=True, slots=True)
class _Statement:
    """The upsert's ``INSERT`` and ``ON CONFLICT`` parts; the whole of it on PostgreSQL."""

    head: str
    tail: str
    postgresql: str


_statements: dict[tuple[str, Span], _Statement] = {}


def _statement(connection: BaseDatabaseWrapper, span: Span) -> _Statement:
    """The upsert's text, built once per vendor and table (quoting is the vendor's rule)."""
    found = _statements.get((connection.vendor, span))
    if found is not None:
        return found
    quote = connection.ops.quote_name
    table = quote(span.model._meta.db_table)
    key = (span.column, *KEY)
    columns = (*key, *COUNTERS)
    head = f"INSERT INTO {table} ({', '.join(quote(c) for c in columns)}) "
    if connection.vendor == "mysql":
        # MySQL and MariaDB: the key's unique constraint is the only one an insert can hit
        # (the id is not given). VALUES() is what both take; MySQL 8.0.20's row alias
        # (``AS new``) is not MariaDB's.
        added = ", ".join(f"{quote(c)} = {quote(c)} + VALUES({quote(c)})" for c in COUNTERS)
        tail = f" ON DUPLICATE KEY UPDATE {added}"
    else:
        added = ", ".join(
            f"{quote(c)} = {table}.{quote(c)} + excluded.{quote(c)}" for c in COUNTERS
        )
        tail = f" ON CONFLICT ({', '.join(quote(c) for c in key)}) DO UPDATE SET {added}"
    values = ", ".join(f"(r->>{i})::{kind}" for i, kind in enumerate(_PG_TYPES))
    postgresql = f"{head}SELECT {values} FROM json_array_elements(%s::json) AS r{tail}"
    found = _statements[(connection.vendor, span)] = _Statement(head, tail, postgresql)
    return found


#: The PostgreSQL types of the columns, in the order of ``(time, *KEY, *COUNTERS)``.
_PG_TYPES: Final = (
    "timestamptz",
    "text",
    "text",
    "text",
    "integer",
    "bigint",
    "bigint",
    "double precision",
    *["bigint"] * histogram.BUCKETS,
)


def _counters(item: Tally) -> list[Any]:
    """The values of :data:`COUNTERS`, in order."""
    return [item.count, item.errors, item.duration_sum, *item.buckets]


def _require_upsert(connection: BaseDatabaseWrapper) -> None:
    if connection.vendor not in VENDORS:
        raise NotSupportedError(
            "django-mcp's request log summaries need PostgreSQL, SQLite, MySQL or MariaDB, "
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


def _truncated(connection: BaseDatabaseWrapper, unit: str, column: str) -> str:
    """SQL for the start of ``column``'s hour or day, as the writer stores it (UTC)."""
    if connection.vendor == "postgresql":  # Django's sessions are in UTC
        return f"date_trunc('{unit}', {column})"
    hour = "%%H" if unit == "hour" else "00"
    if connection.vendor == "mysql":  # a naive UTC datetime; the text converts back to one
        return f"DATE_FORMAT({column}, '%%Y-%%m-%%d {hour}:00:00')"
    # SQLite stores UTC text; this is the text Django writes for the hour or day itself.
    return f"strftime('%%Y-%%m-%%d {hour}:00:00', {column})"


def _exact(connection: BaseDatabaseWrapper, column: str) -> str:
    """``column`` grouped by its exact text: MySQL's usual collations take ``Tool`` and
    ``tool`` for one (migration 0009 makes the summaries' own key columns exact)."""
    return f"CAST({column} AS BINARY)" if connection.vendor == "mysql" else column


def rebuild(since: datetime.datetime | None, alias: str) -> tuple[int, int]:
    """Recount the summaries from the UTC day of ``since`` on (everything when None) from
    the rows of the request log, replacing what was there: hours from the rows, then days
    from the hours. How many hourly and daily rows it wrote.

    Counts rows: requests the log's sampling left out were counted by the writer but are
    not in the rows, so a rebuilt hour of a sampled log shows only the logged requests.
    """
    connection = connections[alias]
    _require_upsert(connection)
    quote = connection.ops.quote_name
    start = day_of(since) if since is not None else None
    params: list[Any] = []
    bucket = _bucket_sql(quote("duration_ms"), 0, histogram.BUCKETS - 1, params)
    errors = ", ".join(f"'{outcome}'" for outcome in ERROR_OUTCOMES)
    sums = ", ".join(f"SUM(CASE WHEN b = {i} THEN n ELSE 0 END)" for i in range(histogram.BUCKETS))
    hours_sql = (
        f"INSERT INTO {quote(RequestLogHour._meta.db_table)} ({_names(HOURS, quote)}) "
        f"SELECT h, site, method, target, code, SUM(n), SUM(e), SUM(s), {sums} FROM ("
        f"SELECT {_truncated(connection, 'hour', quote('started_at'))} AS h, "
        f"{_exact(connection, quote('site'))} AS site, "
        f"{_exact(connection, quote('method'))} AS method, "
        f"{_exact(connection, quote('target'))} AS target, "
        f"COALESCE({quote('error_code')}, 0) AS code, "
        f"{bucket} AS b, COUNT(*) AS n, "
        f"SUM(CASE WHEN {quote('outcome')} IN ({errors}) THEN 1 ELSE 0 END) AS e, "
        f"SUM({quote('duration_ms')}) AS s FROM {quote(RequestLog._meta.db_table)} "
        f"{'' if start is None else 'WHERE ' + quote('started_at') + ' >= %s'} "
        f"GROUP BY 1, 2, 3, 4, 5, 6) AS g GROUP BY h, site, method, target, code"
    )
    days_sql = (
        f"INSERT INTO {quote(RequestLogDay._meta.db_table)} ({_names(DAYS, quote)}) "
        f"SELECT {_truncated(connection, 'day', quote('hour'))}, "
        f"{', '.join(quote(c) for c in KEY)}, "
        f"{', '.join(f'SUM({quote(c)})' for c in COUNTERS)} "
        f"FROM {quote(RequestLogHour._meta.db_table)} "
        f"{'' if start is None else 'WHERE ' + quote('hour') + ' >= %s'} "
        f"GROUP BY 1, {', '.join(quote(c) for c in KEY)}"
    )
    since_params: list[Any] = []
    hours, days = RequestLogHour.objects.using(alias), RequestLogDay.objects.using(alias)
    if start is not None:
        since_params = [connection.ops.adapt_datetimefield_value(start)]
        hours, days = hours.filter(hour__gte=start), days.filter(day__gte=start)
    with transaction.atomic(using=alias):
        hours.delete()
        days.delete()
        with connection.cursor() as cursor:
            cursor.execute(hours_sql, params + since_params)
            written = int(cursor.rowcount), 0
            cursor.execute(days_sql, since_params)
            written = written[0], int(cursor.rowcount)
            if connection.vendor == "postgresql":  # the planner must see the new rows now
                cursor.execute(f"ANALYZE {quote(RequestLogHour._meta.db_table)}")
                cursor.execute(f"ANALYZE {quote(RequestLogDay._meta.db_table)}")
    return written


def _names(span: Span, quote: Any) -> str:
    return ", ".join(quote(c) for c in (span.column, *KEY, *COUNTERS))


def expired(before: datetime.datetime, alias: str) -> tuple[QuerySet[Any], QuerySet[Any]]:
    """The hours that started before ``before``, and the days before its day: what
    :func:`prune` deletes (and ``mcp_prune_logs --dry-run`` counts)."""
    return (
        RequestLogHour.objects.using(alias).filter(hour__lt=before),
        RequestLogDay.objects.using(alias).filter(day__lt=day_of(before)),
    )


def prune(before: datetime.datetime, alias: str) -> int:
    """Delete the :func:`expired` hours and days; how many rows."""
    return sum(rows.delete()[0] for rows in expired(before, alias))
