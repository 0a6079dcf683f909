"""Helpers for the request log tests: settings overrides and real MCP calls."""

from __future__ import annotations

import contextlib
import datetime
import itertools
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import connection, models
from django.test import Client, override_settings
from django.utils import timezone

from django_mcp.http import exchange
from django_mcp.requestlog.models import RequestLog
from django_mcp.requestlog.records import RequestRecord
from tests.helpers import call_tool, request_meta

#: A well-formed dated revision newer than ours: served best-effort
#: (docs/adr/0001-revision-policy.md).
FUTURE_REVISION = "2099-01-01"


def log_settings(**overrides: Any) -> override_settings:
    """``override_settings(DJANGO_MCP=...)`` over the current dict (which keeps the
    background thread off, see tests/conftest.py)."""
    return override_settings(DJANGO_MCP={**settings.DJANGO_MCP, **overrides})


@contextlib.contextmanager
def dropped(*tables: type[models.Model]) -> Iterator[None]:
    """The tables of ``tables`` dropped for the block, as if their migration had not run,
    and created again after it. For a test marked ``django_db(transaction=True)``: MySQL
    and MariaDB commit DDL at once, so a test's transaction could not put them back."""
    with connection.cursor() as cursor:
        for model in tables:
            cursor.execute(f"DROP TABLE {connection.ops.quote_name(model._meta.db_table)}")
    try:
        yield
    finally:
        with connection.schema_editor() as editor:
            for model in tables:
                editor.create_model(model)


def search(client: Client, *, request_id: int = 1, client_version: str = "1.0") -> Any:
    """A successful ``tools/call`` of the demo's ``search_books``."""
    meta = request_meta(client_info={"name": "pytest", "version": client_version})
    return call_tool(client, "search_books", {"query": "x"}, id=request_id, meta=meta)


def missing_book(client: Client) -> Any:
    """A ``tools/call`` whose tool raises ``ToolError`` (a result with ``isError``)."""
    return call_tool(client, "get_book", {"isbn": "none"})


def unknown_tool(client: Client) -> Any:
    """A ``tools/call`` naming no tool: a JSON-RPC error (-32602)."""
    return call_tool(client, "no_such_tool", {})


def best_effort_call(client: Client, *, client_version: str = "1.0", request_id: int = 1) -> Any:
    """``whoami`` declaring :data:`FUTURE_REVISION` in ``_meta`` and (mirrored) the header."""
    meta = request_meta(
        version=FUTURE_REVISION, client_info={"name": "future-client", "version": client_version}
    )
    return call_tool(client, "whoami", {}, id=request_id, meta=meta)


def steady_exchange_clock(monkeypatch: Any) -> None:
    """Stamp the MCP requests a test makes (:func:`django_mcp.http.exchange.now`) 1 ms
    apart from now, moved back, if need be, to a minute before the hour ends: the requests
    of a test then share one hour and one day however long they take, in the order sent.

    Why: a test counting its requests per hour (the summaries) or per day (a calendar
    lookup) failed when the wall clock passed an hour's or a day's end between two of them.
    """
    start = exchange.now()
    hour_end = start.replace(minute=0, second=0, microsecond=0) + datetime.timedelta(hours=1)
    start = min(start, hour_end - datetime.timedelta(minutes=1))
    ticks = itertools.count()
    monkeypatch.setattr(
        exchange, "now", lambda: start + datetime.timedelta(milliseconds=next(ticks))
    )


def log_row(*, days_ago: float = 0, **fields: Any) -> RequestLog:
    """A ``RequestLog`` row written directly (for tests about reading or pruning the log)."""
    values: dict[str, Any] = {
        "started_at": timezone.now() - datetime.timedelta(days=days_ago),
        "site": "mcp",
        "method": "tools/call",
        "target": "search_books",
        "request_id": "1",
        "outcome": "ok",
        "http_status": 200,
        "duration_ms": 1.5,
    }
    values.update(fields)
    return RequestLog.objects.create(**values)


def plain_record(**changes: Any) -> RequestRecord:
    """A successful ``tools/call`` record with every text field storable as it is."""
    record = RequestRecord(
        started_at=datetime.datetime(2026, 7, 28, tzinfo=datetime.UTC),
        site="mcp",
        method="tools/call",
        target="add",
        request_id="1",
        declared_revision="2026-07-28",
        served_revision="2026-07-28",
        served_how="supported",
        client_name="caf\u00e9 \U0001f600",
        client_version="1",
        user_id=None,
        username="",
        outcome="ok",
        error_code=None,
        http_status=200,
        duration_ms=1.0,
        params='{"a": 1}',
        error_message="",
        remote_addr="127.0.0.1",
        user_agent="agent",
    )
    return record._replace(**changes)
