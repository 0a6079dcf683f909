"""Write one batch of request-log records, and account for every one of them.

Why a module of its own: the recorder decides *when* to write and keeps the counters; this
module decides *how*, and must never lose a record silently. A batch goes in with one
``bulk_create``. If the database refuses the batch, one bad row must not take its
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
from typing import TYPE_CHECKING, Final

from django.db import IntegrityError, InterfaceError, OperationalError, connections, transaction

from django_mcp.requestlog.models import RequestLog

if TYPE_CHECKING:
    from collections.abc import Sequence

    from django.db.models import Model

    from django_mcp.requestlog.records import RequestRecord

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


def write(records: Sequence[RequestRecord], alias: str) -> Written:
    """Insert ``records`` on database ``alias``; retry row by row if the batch fails."""
    rows = [_row(record) for record in records]
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


def _write_one_by_one(rows: Sequence[RequestLog], alias: str) -> Written:
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


def _insert(rows: Sequence[RequestLog], alias: str) -> None:
    """One ``bulk_create`` in its own transaction (a savepoint inside an outer one)."""
    try:
        with transaction.atomic(using=alias):
            RequestLog.objects.using(alias).bulk_create(rows)
    except IntegrityError:
        # A user deleted between the request and this flush breaks the foreign key;
        # keep the rows (the username snapshot survives) rather than lose them.
        if not _forget_missing_users(rows, alias):
            raise
        with transaction.atomic(using=alias):
            RequestLog.objects.using(alias).bulk_create(rows)


def _forget_missing_users(rows: Sequence[RequestLog], alias: str) -> bool:
    """Null the user of rows whose user no longer exists; whether any row changed."""
    from django.contrib.auth import get_user_model

    ids = {row.user_id for row in rows if row.user_id is not None}
    if not ids:
        return False
    users = get_user_model()._default_manager.using(alias)
    existing = set(users.filter(pk__in=ids).values_list("pk", flat=True))
    changed = False
    for row in rows:
        if row.user_id is not None and row.user_id not in existing:
            row.user_id = None
            changed = True
    return changed


def _row(record: RequestRecord) -> RequestLog:
    return RequestLog(
        started_at=record.started_at,
        site=record.site,
        method=record.method,
        target=record.target,
        request_id=record.request_id,
        declared_revision=record.declared_revision,
        served_revision=record.served_revision,
        served_how=record.served_how,
        client_name=record.client_name,
        client_version=record.client_version,
        user_id=record.user_id,
        username=record.username,
        outcome=record.outcome,
        error_code=record.error_code,
        http_status=record.http_status,
        duration_ms=record.duration_ms,
        params=record.params,
        error_message=record.error_message,
        permission_denied=record.permission_denied,
        remote_addr=record.remote_addr,
        user_agent=record.user_agent,
    )


def _describe_error(exc: Exception) -> str:
    """The error's class and message, escaped: driver messages may quote the bad text."""
    return f"{type(exc).__name__}: {str(exc)!a}"


def _describe_row(row: RequestLog) -> str:
    """The fields that identify a record, escaped (``ascii``) so a log line stays one
    printable line whatever the client sent."""
    fields = {
        "started_at": row.started_at.isoformat(),
        "site": row.site,
        "method": row.method,
        "target": row.target,
        "request_id": row.request_id,
        "client_name": row.client_name,
        "client_version": row.client_version,
        "outcome": row.outcome,
        "http_status": row.http_status,
    }
    return ascii(fields)
