"""Write one batch of request-log records, and account for every one of them.

Why a module of its own: the recorder decides *when* to write and keeps the counters; this
module decides *how*, and must never lose a record silently. A batch goes in with one
``COPY`` (PostgreSQL) or multi-row ``INSERT`` built straight from the records (no model
instance per row, no ``RETURNING`` of ids nobody reads: the writer thread's CPU is the
server's CPU too). A binary ``COPY`` refused whole is tried once more in the text format,
which a table whose column types changed under the process still takes (see
:func:`_written_as_text`). If the database refuses the batch, one bad row must not take its
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

from django_mcp.db_refusals import mysql_refused_value
from django_mcp.requestlog import pgcopy
from django_mcp.requestlog.models import RequestLog
from django_mcp.requestlog.records import FIELD_INDEX, RequestRecord, Row

if TYPE_CHECKING:
    from collections.abc import Sequence

    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.models import Field, Model

logger = logging.getLogger("django_mcp")

#: Errors that say the database cannot be reached, rather than that it refused a row.
_UNREACHABLE: Final = (OperationalError, InterfaceError)


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be reached, not that it refused a row (a
    MySQL refusal of a value, raised as an ``OperationalError`` too, is refused alone;
    the rows after it are still tried)."""
    return isinstance(exc, _UNREACHABLE) and not mysql_refused_value(exc)


#: The SQLSTATEs of a binary ``COPY`` value PostgreSQL could not read: one of another size
#: than its column's type ("insufficient data left in message", a protocol violation that
#: psycopg raises as an ``OperationalError``, as it does a lost connection), of another
#: representation ("incorrect binary data format"), or read as text by a column whose type
#: became textual (an address's bytes are not UTF-8: "invalid byte sequence for encoding",
#: ``22021``). Only these earn a text retry of the batch: a pooler such as PgBouncer also
#: reports its own failures as ``08P01``, so the row-by-row retry (in text, where no binary
#: refusal can happen) still takes an ``OperationalError`` for an unreachable database.
_BINARY_REFUSED: Final = frozenset({"08P01", "22P03", "22021"})


def _binary_refused(exc: BaseException) -> bool:
    cause = exc.__cause__ or exc
    return getattr(cause, "sqlstate", None) in _BINARY_REFUSED


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
_USER: Final = FIELD_INDEX["user_id"]
_STARTED_AT: Final = FIELD_INDEX["started_at"]


def write(records: Sequence[Row], alias: str) -> Written:
    """Insert ``records`` (each a :class:`RequestRecord` or its :data:`Row`) on database
    ``alias``; retry row by row if the batch fails."""
    rows: list[Row] = list(records)  # a record is its row
    try:
        _insert(rows, alias)
    # Any exception: a record the database (or its driver) refuses for a reason nobody
    # foresaw must still be counted, never lost with its batch (a process boundary).
    except Exception as exc:
        if table_missing(RequestLog, alias, exc):
            raise TableMissing(RequestLog._meta.db_table) from exc
        if _binary_refused(exc) and _written_as_text(rows, alias, exc):
            return Written(len(rows), 0)
        logger.warning(
            "django-mcp could not write a batch of %d request log records (%s); "
            "retrying them one by one.",
            len(rows),
            _describe_error(exc),
        )
        return _write_one_by_one(rows, alias)
    return Written(len(rows), 0)


def _written_as_text(rows: Sequence[Row], alias: str, exc: Exception) -> bool:
    """Retry a batch that went to PostgreSQL in ``COPY``'s binary format in its text
    format; True when it went in.

    Why: PostgreSQL refuses a binary value of another size or representation than its
    column's type, and parses the text format into whatever type the column has. The
    writer compares the table's column types with the model's before its first binary
    ``COPY`` (:mod:`.pgcolumns`), so a refusal means the table changed since (a migration
    applied while this process runs) or a pooler reported its own failure with the same
    code. Either way the table is read again before the next batch, which then goes as
    text only if the types now differ. A batch that fails as text too is a bad row's doing
    (or the database's): the row-by-row retry tells which.
    """
    connection = connections[alias]
    columns = _columns()
    try:
        if not (_copies(connection) and pgcopy.copies_binary(connection, columns, rows)):
            return False
        pgcopy.forget_layout(connection, columns)
        _insert(rows, alias, binary=False)
    except Exception:  # a bad row, or the database gone: the row-by-row retry tells which
        return False
    logger.warning(
        "django-mcp wrote a batch of %d request log records in COPY's text format after "
        "PostgreSQL refused its binary format (%s); the column types of %s are read again "
        "before the next batch.",
        len(rows),
        _describe_error(exc),
        RequestLog._meta.db_table,
    )
    return True


def _write_one_by_one(rows: Sequence[Row], alias: str) -> Written:
    """Each row on its own, in ``COPY``'s text format on PostgreSQL (the format that takes
    the most: see :func:`_written_as_text`); the rare path of a batch that failed."""
    written = 0
    for index, row in enumerate(rows):
        try:
            _insert([row], alias, binary=False)
        except Exception as exc:  # see write(): counted, never lost
            if not _unreachable(exc):
                logger.error(
                    "django-mcp could not write a request log record (%s): %s",
                    _describe_error(exc),
                    _describe_row(row),
                )
                continue
            lost = len(rows) - index
            logger.error(
                "django-mcp could not reach the database to write %d request log records "
                "(%s); they are counted as failed.",
                lost,
                _describe_error(exc),
            )
            return Written(written, lost)
        written += 1
    return Written(written, len(rows) - written)


def _insert(rows: Sequence[Row], alias: str, *, binary: bool = True) -> None:
    """The rows in one transaction (a savepoint inside an outer one)."""
    try:
        with transaction.atomic(using=alias):
            insert_rows(rows, alias, binary=binary)
    except IntegrityError:
        # A user deleted between the request and this flush breaks the foreign key;
        # keep the rows (the username snapshot survives) rather than lose them.
        kept = _forget_missing_users(rows, alias)
        if kept is None:
            raise
        with transaction.atomic(using=alias):
            insert_rows(kept, alias, binary=binary)


def _copies(connection: BaseDatabaseWrapper) -> bool:
    """Whether :func:`insert_rows` writes with ``COPY`` on ``connection`` (PostgreSQL through
    psycopg 3; psycopg 2 gets multi-row ``INSERT`` statements)."""
    if connection.vendor != "postgresql":
        return False
    from django.db.backends.postgresql.psycopg_any import is_psycopg3  # needs a driver

    return bool(is_psycopg3)


def _columns() -> list[Field[Any, Any]]:
    """``RequestLog``'s fields in the record's order (the foreign key by its ``user_id``)."""
    by_attname = {field.attname: field for field in RequestLog._meta.concrete_fields}
    return [by_attname[name] for name in FIELDS]


def insert_rows(rows: Sequence[Row], alias: str, *, binary: bool = True) -> None:
    """One ``COPY`` on PostgreSQL with psycopg 3 (eight times less client CPU than a
    500-row ``INSERT``, whose placeholders psycopg parses on every call; binary where it
    can be and ``binary`` allows, see :mod:`.pgcopy`); elsewhere
    multi-row ``INSERT`` statements, as many rows each as the backend takes parameters
    (what ``bulk_create`` would send, without building a model instance per row)."""
    connection = connections[alias]
    meta = RequestLog._meta
    columns = _columns()
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column or field.attname) for field in columns)
    head = f"INSERT INTO {quote(meta.db_table)} ({names}) VALUES "
    started_at = columns[_STARTED_AT]
    size = max(1, connection.ops.bulk_batch_size(columns, rows))
    one = "(" + ", ".join(["%s"] * len(FIELDS)) + ")"
    with connection.cursor() as cursor:
        if _copies(connection):
            table = quote(meta.db_table)
            pgcopy.copy_rows(connection, cursor, table, names, columns, rows, binary=binary)
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
