"""Write one batch of request-log records, and account for every one of them.

Why a module of its own: the recorder decides *when* to write and keeps the counters; this
module decides *how*, and must never lose a record silently. A batch goes in with one
``COPY`` (PostgreSQL) or multi-row ``INSERT`` built straight from the records (no model
instance per row, no ``RETURNING`` of ids nobody reads: the writer thread's CPU is the
server's CPU too). If
the database refuses the batch, one bad row must not take its
neighbours with it, so the batch is retried row by row: each row is then either written or
counted as failed and logged (its text escaped, since it may hold what the database just
refused). When the database is unreachable, the retry stops at the first row that fails
the same way, and the rest of the batch is counted as failed without another attempt each:
the log is best-effort and a down database must not cost one timeout per record. When the
table does not exist at all (``migrate`` was never run), :class:`TableMissing` tells the
recorder, which says so once, with the command that fixes it, rather than once per row.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from django.db import IntegrityError, InterfaceError, OperationalError, connections, transaction

from django_mcp.requestlog.models import RequestLog
from django_mcp.requestlog.pgcopy import copy_rows
from django_mcp.requestlog.records import RequestRecord

if TYPE_CHECKING:
    from collections.abc import Sequence

    from django.db.models import Model

logger = logging.getLogger("django_mcp")

#: Errors that say the database cannot be reached, rather than that it refused a row.
_UNREACHABLE: Final = (OperationalError, InterfaceError)


class TableMissing(Exception):
    """The table does not exist: ``migrate`` was not run (no row could ever be written)."""

    def __init__(self, table: str) -> None:
        self.table = table
        super().__init__(table)


#: How drivers say "no such table": PostgreSQL's SQLSTATE, MySQL's error number, SQLite's text.
_UNDEFINED_TABLE: Final = "42P01"
_MYSQL_NO_SUCH_TABLE: Final = 1146


def table_missing(model: type[Model], alias: str, exc: BaseException) -> bool:
    """Whether ``exc`` came from ``model``'s table being absent on ``alias``.

    The error must say so (so an unreachable database costs no extra attempt), and the
    database's own table list confirms it.
    """
    cause = exc.__cause__ or exc
    says = (
        getattr(cause, "sqlstate", None) == _UNDEFINED_TABLE
        or getattr(cause, "pgcode", None) == _UNDEFINED_TABLE
        or (bool(cause.args) and cause.args[0] == _MYSQL_NO_SUCH_TABLE)
        or "no such table" in str(exc)
    )
    if not says:
        return False
    try:
        return model._meta.db_table not in connections[alias].introspection.table_names()
    except Exception:  # the database went away meanwhile: not a missing table
        return False


@dataclass(frozen=True, slots=True)
class Written:
    """What became of one batch: every record is in exactly one of the two counts."""

    written: int
    failed: int


#: The record's fields, which are the columns of ``RequestLog`` of the same name (the
#: foreign key is written through its ``user_id`` column), in the ``INSERT``'s order.
FIELDS: Final = RequestRecord._fields
_USER: Final = FIELDS.index("user_id")
_STARTED_AT: Final = FIELDS.index("started_at")

Row = tuple[Any, ...]


def write(records: Sequence[RequestRecord], alias: str) -> Written:
    """Insert ``records`` on database ``alias``; retry row by row if the batch fails."""
    rows: list[Row] = list(records)  # a record is its row
    try:
        _insert(rows, alias)
    # Any exception: a record the database (or its driver) refuses for a reason nobody
    # foresaw must still be counted, never lost with its batch (a process boundary).
    except Exception as exc:
        if table_missing(RequestLog, alias, exc):
            raise TableMissing(RequestLog._meta.db_table) from exc
        logger.warning(
            "django-mcp could not write a batch of %d request log records (%s); "
            "retrying them one by one.",
            len(rows),
            _describe_error(exc),
        )
        return _write_one_by_one(rows, alias)
    return Written(len(rows), 0)


def _write_one_by_one(rows: Sequence[Row], alias: str) -> Written:
    written = 0
    for index, row in enumerate(rows):
        try:
            _insert([row], alias)
        except _UNREACHABLE as exc:
            lost = len(rows) - index
            logger.error(
                "django-mcp could not reach the database to write %d request log records "
                "(%s); they are counted as failed.",
                lost,
                _describe_error(exc),
            )
            return Written(written, lost)
        except Exception as exc:  # see write(): counted, never lost
            logger.error(
                "django-mcp could not write a request log record (%s): %s",
                _describe_error(exc),
                _describe_row(row),
            )
            continue
        written += 1
    return Written(written, len(rows) - written)


def _insert(rows: Sequence[Row], alias: str) -> None:
    """The rows in one transaction (a savepoint inside an outer one)."""
    try:
        with transaction.atomic(using=alias):
            insert_rows(rows, alias)
    except IntegrityError:
        # A user deleted between the request and this flush breaks the foreign key;
        # keep the rows (the username snapshot survives) rather than lose them.
        kept = _forget_missing_users(rows, alias)
        if kept is None:
            raise
        with transaction.atomic(using=alias):
            insert_rows(kept, alias)


def insert_rows(rows: Sequence[Row], alias: str) -> None:
    """One ``COPY`` on PostgreSQL with psycopg 3 (eight times less client CPU than a
    500-row ``INSERT``, whose placeholders psycopg parses on every call; binary where it
    can be, see :mod:`.pgcopy`); elsewhere
    multi-row ``INSERT`` statements, as many rows each as the backend takes parameters
    (what ``bulk_create`` would send, without building a model instance per row)."""
    connection = connections[alias]
    meta = RequestLog._meta
    by_attname = {field.attname: field for field in meta.concrete_fields}
    columns = [by_attname[name] for name in FIELDS]
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column or field.attname) for field in columns)
    head = f"INSERT INTO {quote(meta.db_table)} ({names}) VALUES "
    started_at = columns[_STARTED_AT]
    size = max(1, connection.ops.bulk_batch_size(columns, rows))
    one = "(" + ", ".join(["%s"] * len(FIELDS)) + ")"
    with connection.cursor() as cursor:
        raw = cursor.cursor
        if connection.vendor == "postgresql" and hasattr(raw, "copy"):  # psycopg 3
            copy_rows(connection, cursor, quote(meta.db_table), names, columns, rows)
            return
        for start in range(0, len(rows), size):
            chunk = rows[start : start + size]
            params: list[Any] = []
            for row in chunk:
                values = list(row)
                # The one value a backend may need converted (SQLite stores text).
                values[_STARTED_AT] = started_at.get_db_prep_save(row[_STARTED_AT], connection)
                params.extend(values)
            cursor.execute(head + ", ".join([one] * len(chunk)), params)


def _forget_missing_users(rows: Sequence[Row], alias: str) -> list[Row] | None:
    """The rows with the user nulled where it no longer exists; None when none changed."""
    from django.contrib.auth import get_user_model

    ids = {row[_USER] for row in rows if row[_USER] is not None}
    if not ids:
        return None
    users = get_user_model()._default_manager.using(alias)
    existing = set(users.filter(pk__in=ids).values_list("pk", flat=True))
    if ids <= existing:
        return None
    return [
        (*row[:_USER], None, *row[_USER + 1 :])
        if row[_USER] is not None and row[_USER] not in existing
        else row
        for row in rows
    ]


def _describe_error(exc: Exception) -> str:
    """The error's class and message, escaped: driver messages may quote the bad text."""
    return f"{type(exc).__name__}: {str(exc)!a}"


def _describe_row(row: Row) -> str:
    """The fields that identify a record, escaped (``ascii``) so a log line stays one
    printable line whatever the client sent."""
    named = dict(zip(FIELDS, row, strict=True))
    described = {name: named[name] for name in _DESCRIBED}
    described["started_at"] = named["started_at"].isoformat()
    return ascii(described)


_DESCRIBED: Final = (
    "started_at",
    "site",
    "method",
    "target",
    "request_id",
    "client_name",
    "client_version",
    "outcome",
    "http_status",
)
