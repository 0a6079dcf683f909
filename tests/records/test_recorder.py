"""The request log is written through the real HTTP stack, buffered, and only on flush.

Each test posts real MCP requests to ``/mcp`` (the demo project's default site) with the
Django test client, then calls ``recorder.flush()`` itself: the background thread is off
here (see conftest), so nothing is written behind the test's back and nothing sleeps.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, router
from django.db.models.query import QuerySet
from django.test.utils import CaptureQueriesContext

from django_mcp.protocol.errors import HEADER_MISMATCH, INVALID_PARAMS
from django_mcp.protocol.revisions import CURRENT_REVISION
from django_mcp.requestlog import drain, recorder, served, writer
from django_mcp.requestlog.models import RequestLog, ServedRevision
from tests.helpers import call_tool, notify
from tests.records.support import (
    FUTURE_REVISION,
    best_effort_call,
    log_settings,
    missing_book,
    search,
    unknown_tool,
)

pytestmark = pytest.mark.django_db

LOG_TABLES = (RequestLog._meta.db_table, ServedRevision._meta.db_table)


def test_a_tool_call_is_written_with_what_the_middleware_saw(client):
    search(client, request_id=7)

    assert recorder.flush() == 1

    row = RequestLog.objects.get()
    assert (row.site, row.method, row.target, row.request_id) == (
        "mcp",
        "tools/call",
        "search_books",
        "7",
    )
    assert (row.outcome, row.error_code, row.http_status) == ("ok", None, 200)
    assert (row.declared_revision, row.served_revision, row.served_how) == (
        CURRENT_REVISION,
        CURRENT_REVISION,
        "supported",
    )
    assert (row.client_name, row.client_version) == ("pytest", "1.0")
    assert row.user_id is None
    assert row.duration_ms >= 0
    assert row.params is None  # REQUEST_LOG_PARAMS is off by default


def test_the_request_itself_sends_no_query_to_the_log_tables(client):
    with CaptureQueriesContext(connection) as during_request:
        search(client)

    assert not [q for q in during_request.captured_queries if _touches_log(q["sql"])]
    assert recorder.stats().pending == 1
    assert not RequestLog.objects.exists()
    with CaptureQueriesContext(connection) as during_flush:
        recorder.flush()
    assert [q for q in during_flush.captured_queries if _touches_log(q["sql"])]
    assert RequestLog.objects.count() == 1


def _touches_log(sql: str) -> bool:
    """Whether ``sql`` names a log table (quoted: the summaries' names start with the log's)."""
    return any(connection.ops.quote_name(table) in sql for table in LOG_TABLES)


def test_tool_errors_and_protocol_errors_are_recorded_with_their_outcome(client):
    missing_book(client)
    unknown_tool(client)
    call_tool(client, "search_books", {"query": "x"}, headers={"Mcp-Name": "get_book"})

    recorder.flush()

    outcomes = set(RequestLog.objects.values_list("target", "outcome", "error_code", "http_status"))
    assert outcomes == {
        ("get_book", "tool_error", None, 200),
        # Both are refused by admission; the log still names what the request asked for.
        ("no_such_tool", "protocol_error", INVALID_PARAMS, 200),
        ("search_books", "protocol_error", HEADER_MISMATCH, 400),
    }


def test_an_accepted_notification_is_recorded_as_a_notification(client):
    """basic/transports/streamable-http.mdx, "Sending Messages": an accepted notification
    gets "202 Accepted with no body"; the log keeps the 202 and the outcome
    ``notification``."""
    notify(client, "notifications/cancelled", {"requestId": 1})

    recorder.flush()

    row = RequestLog.objects.get()
    assert (row.method, row.outcome, row.http_status) == (
        "notifications/cancelled",
        "notification",
        202,
    )


def test_a_signed_in_user_is_recorded_with_a_username_snapshot(client):
    user = get_user_model().objects.create_user("ada", password="pw")
    client.force_login(user)

    call_tool(client, "whoami", {})
    recorder.flush()

    row = RequestLog.objects.get()
    assert (row.user_id, row.username) == (user.pk, "ada")


def test_params_are_recorded_truncated_only_when_enabled(client):
    with log_settings(REQUEST_LOG_PARAMS=True, REQUEST_LOG_PARAMS_MAX_CHARS=20):
        search(client)
    recorder.flush()

    params = RequestLog.objects.get().params
    assert params is not None
    assert len(params) == 20


def test_mode_errors_keeps_only_errors(client):
    with log_settings(REQUEST_LOG="errors"):
        search(client)
        missing_book(client)
        unknown_tool(client)
    recorder.flush()

    assert set(RequestLog.objects.values_list("outcome", flat=True)) == {
        "tool_error",
        "protocol_error",
    }
    assert RequestLog.objects.count() == 2


def test_mode_off_records_nothing_not_even_best_effort_serves(client):
    with log_settings(REQUEST_LOG="off"):
        search(client)
        unknown_tool(client)
        best_effort_call(client)

    assert recorder.stats().pending == 0
    recorder.flush()
    assert not RequestLog.objects.exists()
    assert not ServedRevision.objects.exists()


def test_a_zero_sample_rate_drops_successes_but_keeps_every_error(client):
    with log_settings(REQUEST_LOG="all", REQUEST_LOG_SAMPLE_RATE=0.0):
        search(client)
        search(client)
        missing_book(client)
    recorder.flush()

    assert list(RequestLog.objects.values_list("outcome", flat=True)) == ["tool_error"]


def test_sampling_keeps_a_success_when_the_draw_is_below_the_rate(client, monkeypatch):
    draws = iter([0.2, 0.8, 0.49])
    monkeypatch.setattr(recorder, "sample", lambda: next(draws))

    with log_settings(REQUEST_LOG_SAMPLE_RATE=0.5):
        for request_id in (1, 2, 3):
            search(client, request_id=request_id)
    recorder.flush()

    assert sorted(RequestLog.objects.values_list("request_id", flat=True)) == ["1", "3"]


def test_a_best_effort_serve_creates_then_increments_its_served_revision(client):
    """docs/adr/0001-revision-policy.md: newer dated revisions are served best-effort and
    recorded.

    basic/versioning.mdx: "There is no negotiation handshake. Every request carries its
    protocol version, and the server accepts or rejects each request independently."
    """
    best_effort_call(client, request_id=1)
    best_effort_call(client, request_id=2)
    recorder.flush()

    served = ServedRevision.objects.get()
    assert (served.revision, served.client_name, served.client_version, served.count) == (
        FUTURE_REVISION,
        "future-client",
        "1.0",
        2,
    )
    first_seen, last_seen = served.first_seen, served.last_seen
    assert first_seen < last_seen
    row = RequestLog.objects.filter(request_id="1").get()
    assert (row.declared_revision, row.served_revision, row.served_how) == (
        FUTURE_REVISION,
        CURRENT_REVISION,
        "best-effort",
    )

    best_effort_call(client, request_id=3)
    recorder.flush()

    served.refresh_from_db()
    assert served.count == 3
    assert served.first_seen == first_seen
    assert served.last_seen > last_seen


def test_each_client_version_gets_its_own_served_revision(client):
    best_effort_call(client, client_version="1.0")
    best_effort_call(client, client_version="2.0")
    search(client)  # supported: not counted
    recorder.flush()

    assert set(ServedRevision.objects.values_list("client_version", "count")) == {
        ("1.0", 1),
        ("2.0", 1),
    }


def test_a_best_effort_tally_is_keyed_by_the_storable_client_version(client):
    """Records are made storable in the writer; tally keys as they are counted, so a NUL or
    a lone surrogate in the client's version never fails the upsert."""
    best_effort_call(client, client_version="1\x00\ud800")
    assert recorder.flush() == 1

    assert list(ServedRevision.objects.values_list("client_version", "count")) == [
        ("1\ufffd\ufffd", 1)
    ]
    assert recorder.stats().failed == 0


def test_best_effort_serves_are_counted_even_when_the_log_keeps_only_errors(client):
    with log_settings(REQUEST_LOG="errors"):
        best_effort_call(client)
    recorder.flush()

    assert not RequestLog.objects.exists()
    assert ServedRevision.objects.get().count == 1


def test_losing_the_insert_race_retries_the_update(client, monkeypatch):
    """Another process inserts the same triple between our UPDATE and our INSERT."""
    real_update = served.update_served
    calls: list[int] = []

    def update_after_a_rival_inserted(key: Any, tally: Any, alias: str) -> int:
        if not calls:
            revision, name, version = key
            ServedRevision.objects.create(
                revision=revision,
                client_name=name,
                client_version=version,
                count=5,
                first_seen=tally.first_seen,
                last_seen=tally.last_seen,
            )
            calls.append(0)
            return 0  # our UPDATE ran before the rival's INSERT committed
        calls.append(1)
        return real_update(key, tally, alias)

    monkeypatch.setattr(served, "update_served", update_after_a_rival_inserted)
    best_effort_call(client)

    recorder.flush()

    assert calls == [0, 1]
    assert ServedRevision.objects.get().count == 6


def test_a_full_buffer_drops_the_oldest_records_and_counts_them(client, caplog):
    with log_settings(REQUEST_LOG_BUFFER_SIZE=2):
        for request_id in (1, 2, 3):
            search(client, request_id=request_id)

    assert recorder.stats().dropped == 1
    with caplog.at_level(logging.WARNING, logger="django_mcp"):
        assert recorder.flush() == 2

    assert sorted(RequestLog.objects.values_list("request_id", flat=True)) == ["2", "3"]
    assert [r.levelno for r in caplog.records if r.name == "django_mcp"] == [logging.WARNING]


def test_flush_writes_in_batches_of_the_configured_size(client, monkeypatch):
    sizes = []
    insert_rows = writer.insert_rows

    def spy(rows: Any, alias: str, **kwargs: Any) -> None:
        sizes.append(len(rows))
        insert_rows(rows, alias, **kwargs)

    monkeypatch.setattr(writer, "insert_rows", spy)
    with log_settings(REQUEST_LOG_BATCH_SIZE=2):
        for request_id in range(5):
            search(client, request_id=request_id)
        assert recorder.flush() == 5

    assert sizes == [2, 2, 1]
    assert RequestLog.objects.count() == 5


def test_a_batch_is_one_insert_without_model_instances_or_returned_ids(client, monkeypatch):
    """The writer sends one multi-row INSERT per batch and builds no ``RequestLog`` per
    record (``bulk_create`` would, and would ask for every new id back)."""
    for request_id in range(5):
        search(client, request_id=request_id)
    built = []
    original_init = RequestLog.__init__

    def counting_init(self: RequestLog, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        original_init(self, *args, **kwargs)

    monkeypatch.setattr(RequestLog, "__init__", counting_init)
    with CaptureQueriesContext(connection) as queries:
        assert recorder.flush() == 5
    monkeypatch.undo()

    [statement] = [q["sql"] for q in queries.captured_queries if _touches_log(q["sql"])]
    assert statement.startswith("COPY" if connection.vendor == "postgresql" else "INSERT")
    assert "RETURNING" not in statement.upper()
    assert built == []
    rows = sorted(RequestLog.objects.all(), key=lambda row: row.request_id)
    assert [row.request_id for row in rows] == ["0", "1", "2", "3", "4"]
    assert {(row.method, row.target, row.outcome, row.http_status) for row in rows} == {
        ("tools/call", "search_books", "ok", 200)
    }
    assert all(row.started_at.tzinfo is not None and row.client_name == "pytest" for row in rows)


def test_a_database_error_while_flushing_is_logged_not_raised(client, monkeypatch, caplog):
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise DatabaseError("disk full")

    monkeypatch.setattr(writer, "insert_rows", broken)
    monkeypatch.setattr(QuerySet, "update", broken)
    search(client)
    best_effort_call(client)

    with caplog.at_level(logging.ERROR, logger="django_mcp"):
        assert recorder.flush() == 0

    assert recorder.stats().failed == 3  # two log rows and one served-revision tally
    assert recorder.stats().pending == 0  # a failed record is dropped, not retried forever
    # The batch is retried row by row; each refused row, and the tally, is logged once.
    assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 3


def test_shutdown_writes_what_is_still_buffered(client):
    search(client)

    recorder.shutdown()

    assert RequestLog.objects.count() == 1


def test_shutdown_does_not_wait_for_ever_on_a_flush_stuck_in_the_database(
    client, monkeypatch, caplog
):
    """A writer stuck in a database write that never returns holds the flush lock; exit
    (``atexit`` runs ``shutdown``) must give up after a bounded wait and say what it lost,
    not hang the process for ever."""
    stuck, release = threading.Event(), threading.Event()

    def write_that_hangs(*args: object) -> None:
        stuck.set()
        release.wait(30)

    monkeypatch.setattr(drain, "write", write_that_hangs)
    monkeypatch.setattr(recorder, "_SHUTDOWN_JOIN_SECONDS", 0.2)
    search(client)
    flushing = threading.Thread(target=recorder.flush, daemon=True)
    flushing.start()
    assert stuck.wait(10)
    search(client)  # buffered while the writer is stuck
    exiting = threading.Thread(target=recorder.shutdown, daemon=True)
    try:
        with caplog.at_level(logging.ERROR, logger="django_mcp"):
            exiting.start()
            exiting.join(10)
            assert not exiting.is_alive(), "shutdown waited for the stuck flush"
    finally:
        release.set()
        flushing.join(10)
    assert "1 buffered records were not written" in caplog.text
    assert recorder.stats().pending == 1


def test_the_background_thread_starts_on_demand_and_flushes_a_quarter_full_buffer(
    client, monkeypatch
):
    flushed = threading.Event()
    monkeypatch.setattr(recorder, "flush", flushed.set)  # the thread never touches the DB here

    with log_settings(
        REQUEST_LOG_BACKGROUND=True, REQUEST_LOG_BUFFER_SIZE=4, REQUEST_LOG_FLUSH_INTERVAL=3600
    ):
        search(client)
        # A quarter-full buffer wakes the thread at once instead of after the hour-long
        # interval.
        assert flushed.wait(timeout=10)
        assert next(t for t in threading.enumerate() if t.name == "django-mcp-recorder").daemon
        recorder.stop()

    assert not [t for t in threading.enumerate() if t.name == "django-mcp-recorder"]


def _closes_in_thread(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """Every ``close()`` of a database connection made by the thread called ``name``."""
    closes: list[str] = []
    wrapper = type(connections[DEFAULT_DB_ALIAS])
    real_close = wrapper.close

    def counted_close(self: Any) -> None:
        if threading.current_thread().name == name:
            closes.append(self.alias)
        real_close(self)

    monkeypatch.setattr(wrapper, "close", counted_close)
    return closes


def _in_thread(name: str, work: Any) -> None:
    thread = threading.Thread(target=work, name=name)
    thread.start()
    thread.join()


@pytest.mark.django_db(transaction=True)
def test_the_writer_keeps_its_connection_while_records_come_and_closes_it_when_idle(
    client, monkeypatch
):
    """Opening a connection costs about a millisecond of CPU: the writer thread keeps its
    own while a tick has records to write, and an idle tick closes it."""
    closes = _closes_in_thread(monkeypatch, "writer")
    search(client)
    after_each_tick: list[int] = []

    def writer() -> None:
        recorder._flush_in_thread()  # one record to write: the connection stays open
        after_each_tick.append(len(closes))
        recorder._flush_in_thread()  # nothing to write: closed
        after_each_tick.append(len(closes))

    _in_thread("writer", writer)

    assert after_each_tick == [0, 1]
    assert RequestLog.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_writer_replaces_a_connection_that_is_no_longer_usable(client, monkeypatch):
    """A kept connection may have died meanwhile (a database restart): it is checked and
    replaced before the batch, which is then written rather than counted as failed."""
    closes = _closes_in_thread(monkeypatch, "writer")
    monkeypatch.setattr(type(connections[DEFAULT_DB_ALIAS]), "is_usable", lambda self: False)
    search(client)

    alias = router.db_for_write(RequestLog)
    closed_by_the_flush: list[str] = []

    def writer() -> None:
        connections[alias].ensure_connection()  # kept from an earlier flush
        recorder._flush_in_thread()
        closed_by_the_flush.extend(closes)
        connections[alias].close()  # the test's own cleanup: the thread ends here

    _in_thread("writer", writer)

    assert closed_by_the_flush == [alias]
    assert RequestLog.objects.count() == 1
    assert recorder.stats().failed == 0


@pytest.mark.django_db(transaction=True)
def test_a_user_deleted_before_the_flush_does_not_lose_the_batch(client):
    user = get_user_model().objects.create_user("grace", password="pw")
    client.force_login(user)
    call_tool(client, "whoami", {})
    search(client)  # same batch, same user
    user.delete()

    assert recorder.flush() == 2

    assert set(RequestLog.objects.values_list("user_id", "username")) == {(None, "grace")}


def test_a_submit_while_the_thread_is_ending_does_not_stop_logging_for_good(monkeypatch):
    """A recorder thread whose loop has ended (REQUEST_LOG_BACKGROUND off for a moment, an
    error) is still alive while it closes its connection. A submit in that window must not
    leave the process believing a thread runs: once it is gone, the next submit starts one.
    """
    monkeypatch.setattr(recorder, "flush", lambda: 0)  # the new thread never touches the DB
    monkeypatch.setattr(recorder, "_state", recorder._State())
    ending = threading.Event()
    dying = threading.Thread(target=ending.wait, name="django-mcp-recorder")
    dying.start()
    # As _run leaves it: its finally has cleared the flag, the thread has not exited yet.
    recorder._state.thread = dying
    recorder._state.thread_running = False
    with log_settings(REQUEST_LOG_BACKGROUND=True, REQUEST_LOG_FLUSH_INTERVAL=3600):
        recorder._ensure_thread()  # a submit in the window
        ending.set()
        dying.join()
        recorder._ensure_thread()  # the next submit
        try:
            assert recorder._state.thread is not dying
            assert recorder._state.thread is not None
            assert recorder._state.thread.is_alive()
        finally:
            recorder.stop()


def test_a_full_batch_alone_does_not_wake_the_writer_before_its_interval(client, monkeypatch):
    """Under steady load the writer flushes once per interval, whatever the rate: a flush's
    fixed cost (transactions, the summaries' upserts) is paid once per interval, not once
    per batch. Only a quarter-full buffer wakes it early."""
    flushed = threading.Event()
    monkeypatch.setattr(recorder, "flush", flushed.set)

    with log_settings(
        REQUEST_LOG_BACKGROUND=True,
        REQUEST_LOG_BATCH_SIZE=1,
        REQUEST_LOG_BUFFER_SIZE=40,
        REQUEST_LOG_FLUSH_INTERVAL=3600,
    ):
        for request_id in range(9):  # nine full batches, a buffer under a quarter full
            search(client, request_id=request_id)
        assert not flushed.wait(timeout=0.5)
        search(client, request_id=9)  # ten: a quarter
        assert flushed.wait(timeout=10)
        recorder.stop()
