"""Hostile text in a request never costs the request log a record.

A ``clientInfo.name`` with NUL (PostgreSQL refuses NUL in text) or a lone surrogate in the
JSON-RPC ``id`` (valid JSON, ``"\\ud800"``, which no driver can encode as UTF-8) used to
fail the whole batch; the batch had already left the buffer, so its records vanished and
no counter said so. Each test sends real requests through the Django test client and
flushes; ``recorder.stats()`` must account for every record sent. These run on SQLite and
on PostgreSQL (CI runs both); where the two databases differ (only PostgreSQL refuses NUL),
the test asserts what each one does rather than skipping.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.db import OperationalError, connection

from django_mcp.requestlog import drain, recorder, writer
from django_mcp.requestlog.models import RequestLog
from django_mcp.requestlog.records import FIELD_INDEX
from django_mcp.requestlog.sanitise import REPLACEMENT
from tests.helpers import call_tool, mcp_post, request_meta
from tests.records.support import search

pytestmark = pytest.mark.django_db

#: Characters some database or driver refuses, and one that is merely misleading.
NUL, LONE_SURROGATE, RTL_OVERRIDE = "\x00", "\ud800", "\u202e"


def hostile_client_name(client: Any, name: str, *, request_id: Any = 1) -> Any:
    meta = request_meta(client_info={"name": name, "version": f"1{name}"})
    return call_tool(client, "search_books", {"query": "x"}, id=request_id, meta=meta)


@pytest.mark.parametrize(
    ("bad", "stored"),
    [
        (NUL, REPLACEMENT),
        (LONE_SURROGATE, REPLACEMENT),
        (RTL_OVERRIDE, REPLACEMENT),
        ("\x1b[31m", f"{REPLACEMENT}[31m"),  # a terminal escape loses its ESC
        ("\x7f\x85", REPLACEMENT * 2),  # DEL and a C1 control
        ("caf\u00e9 \u2603 \U0001f600", "caf\u00e9 \u2603 \U0001f600"),  # text is kept
    ],
)
def test_hostile_client_info_is_stored_with_the_bad_characters_replaced(client, bad, stored):
    hostile_client_name(client, f"probe{bad}name")

    assert recorder.flush() == 1

    row = RequestLog.objects.get()
    assert (row.client_name, row.client_version) == (f"probe{stored}name", f"1probe{stored}name")
    assert recorder.stats() == recorder.RecorderStats(pending=0, dropped=0, written=1, failed=0)


def test_a_lone_surrogate_in_the_request_id_does_not_lose_its_batch(client):
    """basic/index.mdx: a request ``id`` is a string or a number; ``"\\ud800"`` is a JSON
    string, so the request is served, and its record must be written like any other."""
    search(client, request_id=1)
    response = mcp_post(client, "tools/list", {}, id=LONE_SURROGATE)
    assert response.status_code == 200
    search(client, request_id=3)

    assert recorder.flush() == 3

    assert sorted(RequestLog.objects.values_list("request_id", flat=True)) == [
        "1",
        "3",
        REPLACEMENT,
    ]
    assert recorder.stats().failed == 0


@pytest.mark.parametrize("bad", [NUL, LONE_SURROGATE])
def test_a_row_the_database_refuses_is_counted_and_logged_and_spares_its_batch(
    client, monkeypatch, caplog, bad
):
    """Without the sanitiser, the database's own refusal reaches the writer: the batch is
    retried row by row, the good rows are written, the bad one is counted and logged."""
    monkeypatch.setattr(drain, "all_sanitised", lambda records: records)
    search(client, request_id=1)
    hostile_client_name(client, f"probe{bad}", request_id=2)
    search(client, request_id=3)
    # SQLite stores NUL; PostgreSQL refuses it. No driver encodes a lone surrogate.
    refused = bad == LONE_SURROGATE or connection.vendor == "postgresql"

    with caplog.at_level(logging.WARNING, logger="django_mcp"):
        written = recorder.flush()

    assert written == (2 if refused else 3)
    assert RequestLog.objects.count() == written
    stats = recorder.stats()
    assert (stats.written, stats.failed, stats.dropped, stats.pending) == (
        written,
        3 - written,
        0,
        0,
    )
    if refused:
        [line] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert "could not write a request log record" in line
        assert "'request_id': '2'" in line
        assert bad not in line  # escaped: the log line is printable and encodable
        assert repr(bad)[1:-1] in line


def test_an_unreachable_database_counts_the_batch_without_one_attempt_per_row(
    client, monkeypatch, caplog
):
    for request_id in range(5):
        search(client, request_id=request_id)
    attempts = []

    def unreachable() -> None:
        attempts.append(1)
        raise OperationalError('connection to server at "db.internal", port 5432 failed')

    monkeypatch.setattr(connection, "ensure_connection", unreachable)
    with caplog.at_level(logging.ERROR, logger="django_mcp"):
        assert recorder.flush() == 0
    monkeypatch.undo()

    assert recorder.stats() == recorder.RecorderStats(
        pending=0, dropped=0, written=0, failed=5, summary_failed=5
    )
    assert len(attempts) == 3  # the batch, the first row, the summaries; not once per row
    assert not RequestLog.objects.exists()


class MySQLdbOperationalError(Exception):
    """What mysqlclient (``MySQLdb``, the driver Django supports) raises for a value its
    column cannot store: it maps only a few of MySQL's data errors to ``DataError``, and
    every other server error, 1366 "Incorrect string value" included, to
    ``OperationalError``, the class of a lost connection."""


def test_a_value_mysql_refuses_as_an_operational_error_spares_the_rest_of_its_batch(
    client, monkeypatch, caplog
):
    """A table in ``latin1`` or ``utf8mb3`` (MySQL's defaults before 8.0, MariaDB's before
    11.6) refuses an emoji with error 1366, which mysqlclient raises as an
    ``OperationalError``: that row is refused, the database is not gone, so it is counted
    and logged alone and the rows after it are still written, not counted as failed
    without an attempt as for an unreachable database."""
    insert_rows = writer.insert_rows
    emoji = "\U0001f600"

    def utf8mb3_column(rows: Any, alias: str, *, binary: bool = True) -> None:
        if any(emoji in row[FIELD_INDEX["client_name"]] for row in rows):
            message = "Incorrect string value: '\\xF0\\x9F\\x98\\x80' for column `client_name`"
            raise OperationalError(1366, message) from MySQLdbOperationalError(1366, message)
        insert_rows(rows, alias, binary=binary)

    monkeypatch.setattr(writer, "insert_rows", utf8mb3_column)
    search(client, request_id=1)
    hostile_client_name(client, f"probe{emoji}", request_id=2)
    for request_id in range(3, 6):
        search(client, request_id=request_id)

    with caplog.at_level(logging.WARNING, logger="django_mcp"):
        written = recorder.flush()

    assert written == 4
    assert sorted(RequestLog.objects.values_list("request_id", flat=True)) == list("1345")
    stats = recorder.stats()
    assert (stats.written, stats.failed) == (4, 1)
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert not [m for m in messages if "could not reach" in m]
    [refused] = [m for m in messages if "could not write a request log record" in m]
    assert "'request_id': '2'" in refused
