"""The writer's ``COPY`` on PostgreSQL is binary where it can be, text where it must be, and
the rows read back the same either way (django_mcp/requestlog/pgcopy.py).

Binary ``COPY`` sends each value's own representation under a type named per column, so
a wrong type name or an unconverted value would fail a batch (and its retry, row by
row): every column is written with a value that is not its default and read back.
"""

from __future__ import annotations

import datetime
import ipaddress
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import DataError, connection
from django.test.utils import CaptureQueriesContext

from django_mcp.requestlog import pgcopy, writer
from django_mcp.requestlog.models import RequestLog
from django_mcp.requestlog.records import RequestRecord

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="COPY is PostgreSQL's"),
]

LOG_TABLE = RequestLog._meta.db_table


def every_field(started_at: datetime.datetime, user_id: Any) -> RequestRecord:
    return RequestRecord(
        started_at=started_at,
        site="mcp",
        method="tools/call",
        target="r\u00e9sum\u00e9 \U0001f600",
        request_id="req-7",
        declared_revision="2099-01-01",
        served_revision="2026-07-28",
        served_how="best-effort",
        client_name="caf\u00e9",
        client_version="1.2.3",
        user_id=user_id,
        username="ada",
        outcome="tool_error",
        error_code=-32602,
        http_status=422,
        duration_ms=12.375,
        params='{"q": "\u00fcber", "n": [1, 2.5, null]}',
        error_message="Unknown tool: x \\ y\ttab",
        permission_denied=True,
        remote_addr="2001:db8::1",
        user_agent="agent/1.0 (\u00e9)",
    )


def copy_statements(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if q["sql"].startswith("COPY")]


def read_back(record: RequestRecord) -> dict[str, Any]:
    row = RequestLog.objects.values(*RequestRecord._fields).get()
    return {name: row[name] for name in record._fields}


def test_every_column_round_trips_through_a_binary_copy():
    user = get_user_model().objects.create_user("ada")
    started_at = datetime.datetime(2026, 7, 28, 12, 34, 56, 789012, tzinfo=datetime.UTC)
    record = every_field(started_at, user.pk)

    with CaptureQueriesContext(connection) as queries:
        assert writer.write([record, record._replace(remote_addr=None)], "default").written == 2

    [statement] = copy_statements(queries)
    assert statement.endswith("FROM STDIN (FORMAT BINARY)")
    rows = sorted(
        RequestLog.objects.values(*RequestRecord._fields), key=lambda r: r["remote_addr"] or ""
    )
    assert rows == [record._replace(remote_addr=None)._asdict(), record._asdict()]


def test_naive_timestamps_go_as_text_and_keep_their_meaning(settings):
    """``USE_TZ = False``: PostgreSQL reads a naive timestamp in the session's time zone,
    which only the text format carries."""
    settings.USE_TZ = False
    started_at = datetime.datetime(2026, 7, 28, 12, 0, 0, 5)
    record = every_field(started_at, None)

    with CaptureQueriesContext(connection) as queries:
        assert writer.write([record], "default").written == 1

    [statement] = copy_statements(queries)
    assert "BINARY" not in statement
    assert read_back(record) == record._asdict()


def test_a_column_type_psycopg_does_not_know_keeps_the_text_format(monkeypatch):
    """A custom user model's key of a type psycopg has no name for: text ``COPY``."""

    class Unknown:
        def db_type(self, connection: Any) -> str:
            return "geometry(Point, 4326)"

    assert pgcopy.binary_layout(connection, [Unknown()]) is None  # type: ignore[list-item]
    monkeypatch.setattr(pgcopy, "binary_layout", lambda *args: None)
    record = every_field(datetime.datetime.now(datetime.UTC), None)

    with CaptureQueriesContext(connection) as queries:
        assert writer.write([record], "default").written == 1

    [statement] = copy_statements(queries)
    assert "BINARY" not in statement
    assert read_back(record) == record._asdict()


def test_a_value_of_the_wrong_type_fails_only_its_own_row():
    """A value the binary dumper refuses (a transport bug) is counted as failed and its
    neighbours are written, as any row the database refuses."""
    good = every_field(datetime.datetime.now(datetime.UTC), None)
    bad = good._replace(http_status="four hundred")  # type: ignore[arg-type]

    outcome = writer.write([good, bad, good._replace(request_id="req-8")], "default")

    assert (outcome.written, outcome.failed) == (2, 1)
    assert sorted(RequestLog.objects.values_list("request_id", flat=True)) == ["req-7", "req-8"]


def test_an_integer_out_of_its_column_s_range_is_refused_not_wrapped():
    """psycopg's binary dumpers wrap an ``int4`` out of range (2**31 + 5 would be stored as
    -2147483643); such a batch goes as text, where PostgreSQL refuses the row."""
    good = every_field(datetime.datetime.now(datetime.UTC), None)
    huge = good._replace(request_id="huge", error_code=2**31 + 5)

    with CaptureQueriesContext(connection) as queries:
        outcome = writer.write([good, huge], "default")

    assert (outcome.written, outcome.failed) == (1, 1)
    assert "BINARY" not in copy_statements(queries)[0]
    assert list(RequestLog.objects.values_list("request_id", "error_code")) == [("req-7", -32602)]


def test_a_user_key_left_as_text_is_written_as_the_text_format_writes_it():
    """An authenticator whose user has a text ``pk``: the text format parses it."""
    user = get_user_model().objects.create_user("grace")
    record = every_field(datetime.datetime.now(datetime.UTC), str(user.pk))

    assert writer.write([record], "default").written == 1

    assert RequestLog.objects.get().user_id == user.pk


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("255.255.255.255", "255.255.255.255"),
        ("::", "::"),
        ("2001:db8::ff00:42:8329", "2001:db8::ff00:42:8329"),
        ("::ffff:10.0.0.1", "::ffff:10.0.0.1"),
        ("fe80::1%eth0", "fe80::1"),  # PostgreSQL's inet has no zone id
    ],
)
def test_each_kind_of_address_is_stored_as_postgresql_reads_it(sent: str, stored: str):
    """The binary COPY sends an address as ``inet``'s binary form, built by django-mcp
    (pgcopy.inet_binary): PostgreSQL must read back the address that was sent."""
    record = every_field(datetime.datetime.now(datetime.UTC), None)._replace(remote_addr=sent)

    with CaptureQueriesContext(connection) as queries:
        assert writer.write([record], "default").written == 1

    [statement] = copy_statements(queries)
    assert statement.endswith("FROM STDIN (FORMAT BINARY)")
    assert RequestLog.objects.get().remote_addr == stored


def test_an_interface_is_stored_with_its_prefix():
    """A writer's caller may hand it an ``ipaddress`` interface: stored as PostgreSQL's
    ``inet`` with its network's prefix, as psycopg's own dumper stored it."""
    now = datetime.datetime.now(datetime.UTC)
    records = [
        every_field(now, None)._replace(remote_addr=ipaddress.ip_interface(text))
        for text in ("10.1.2.3/8", "2001:db8::5/64")
    ]

    assert writer.write(records, "default").written == 2

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT remote_addr::text FROM {RequestLog._meta.db_table}")
        assert sorted(text for (text,) in cursor.fetchall()) == ["10.1.2.3/8", "2001:db8::5/64"]


def test_a_long_address_text_is_not_remembered():
    """Zone ids make IPv6 address texts of any length: only short ones are cached."""
    pgcopy._cached_address.cache_clear()
    long_text = "fe80::1%" + "x" * 200

    assert pgcopy._address(long_text) == pgcopy.inet_binary("fe80::1")
    assert pgcopy._address("10.0.0.1") == pgcopy._address("10.0.0.1")
    assert pgcopy._cached_address.cache_info().currsize == 1


@pytest.fixture
def forget_layouts() -> Any:
    """Each test's writer reads the table afresh, and what it learnt is not the next one's."""
    pgcopy._layouts.clear()
    yield
    pgcopy._layouts.clear()


def alter(sql: str) -> None:
    with connection.cursor() as cursor:
        # The test's transaction may hold rows whose deferred foreign key checks are pending.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"ALTER TABLE {LOG_TABLE} {sql}")


def drift_warnings(caplog: Any) -> list[str]:
    return [r.getMessage() for r in caplog.records if "do not have the types" in r.getMessage()]


def test_a_table_whose_column_types_drifted_is_written_as_text(forget_layouts, caplog):
    """An upgrade whose migration was not applied: ``http_status`` is ``bigint`` in the
    table and ``smallint`` in the model, which PostgreSQL would refuse in every binary
    batch. The writer reads the table's types before its first binary ``COPY``, writes
    text, says once which column differs and the fix, and loses nothing."""
    alter("ALTER COLUMN http_status TYPE bigint")
    record = every_field(datetime.datetime.now(datetime.UTC), None)

    with caplog.at_level("WARNING", logger="django_mcp"), CaptureQueriesContext(connection) as q:
        first = writer.write([record, record._replace(request_id="req-8")], "default")
        second = writer.write([record._replace(request_id="req-9")], "default")

    assert (first.written, first.failed, second.written, second.failed) == (2, 0, 1, 0)
    assert ["BINARY" in statement for statement in copy_statements(q)] == [False, False]
    [warning] = [r.getMessage() for r in caplog.records if r.name == "django_mcp"]
    assert "http_status is bigint (the model has smallint)" in warning
    assert "manage.py migrate django_mcp" in warning
    assert sorted(RequestLog.objects.values_list("request_id", "http_status")) == [
        ("req-7", 422),
        ("req-8", 422),
        ("req-9", 422),
    ]


def test_a_same_width_type_change_stores_the_right_values(forget_layouts, caplog):
    """``error_code`` made ``real`` (four bytes, as ``integer``): PostgreSQL takes a binary
    integer's bytes as a float without a word, so only reading the table's types first
    keeps the stored number right (-32602, not the float those bytes spell)."""
    alter("ALTER COLUMN error_code TYPE real")
    record = every_field(datetime.datetime.now(datetime.UTC), None)

    with caplog.at_level("WARNING", logger="django_mcp"):
        assert writer.write([record], "default").written == 1

    assert RequestLog.objects.values_list("error_code", flat=True).get() == -32602
    [warning] = drift_warnings(caplog)
    assert "error_code is real (the model has integer)" in warning


def test_a_missing_column_is_named_with_the_fix(forget_layouts, caplog):
    """A column the model has and the table lacks (a migration that adds one, not applied)
    is refused in either format: the rows are counted as failed, and the warning names
    the column and the command that fixes it."""
    alter("DROP COLUMN user_agent")
    record = every_field(datetime.datetime.now(datetime.UTC), None)

    with caplog.at_level("WARNING", logger="django_mcp"):
        outcome = writer.write([record], "default")

    assert (outcome.written, outcome.failed) == (0, 1)
    [warning] = drift_warnings(caplog)
    assert "user_agent is missing (the model has character varying)" in warning
    assert "manage.py migrate django_mcp" in warning


def test_matching_types_are_read_once_and_the_copy_stays_binary(forget_layouts, caplog):
    """The catalogue is read before the first binary ``COPY`` only, and a table that
    matches the model is written in binary without a warning."""
    record = every_field(datetime.datetime.now(datetime.UTC), None)

    with caplog.at_level("WARNING", logger="django_mcp"), CaptureQueriesContext(connection) as q:
        writer.write([record], "default")
        writer.write([record._replace(request_id="req-8")], "default")

    catalogue = [s for s in (x["sql"] for x in q.captured_queries) if "pg_attribute" in s]
    assert len(catalogue) == 1
    assert ["BINARY" in statement for statement in copy_statements(q)] == [True, True]
    assert not [r for r in caplog.records if r.name == "django_mcp"]


def test_a_binary_refusal_with_matching_types_does_not_switch_the_process_to_text(
    forget_layouts, monkeypatch, caplog
):
    """A pooler's transient ``08P01`` on a binary batch: the batch goes in as text, the
    table is read again, and since its types match, the next batch is binary again and
    nobody is told to run ``migrate``."""
    from django.db import OperationalError

    insert_rows = writer.insert_rows
    attempts: list[bool] = []

    def refused_once(rows: Any, alias: str, *, binary: bool = True) -> None:
        attempts.append(binary)
        if len(attempts) == 1:
            insert_rows(rows, alias, binary=binary)  # the table is read, the layout kept
            raise OperationalError("server conn crashed?") from PoolerError()
        insert_rows(rows, alias, binary=binary)

    monkeypatch.setattr(writer, "insert_rows", refused_once)
    record = every_field(datetime.datetime.now(datetime.UTC), None)

    with caplog.at_level("WARNING", logger="django_mcp"), CaptureQueriesContext(connection) as q:
        first = writer.write([record], "default")
        second = writer.write([record._replace(request_id="req-8")], "default")

    assert (first.written, second.written) == (1, 1)
    assert attempts == [True, False, True]
    catalogue = [s for s in (x["sql"] for x in q.captured_queries) if "pg_attribute" in s]
    assert len(catalogue) == 2  # read again after the refusal
    assert ["BINARY" in s for s in copy_statements(q)][-1] is True
    messages = [r.getMessage() for r in caplog.records if r.name == "django_mcp"]
    [message] = messages
    assert "read again" in message
    assert "migrate" not in message


def test_types_changed_under_the_process_refused_binary_then_a_bad_row_fails_alone(
    forget_layouts, caplog
):
    """The table changes after the writer read it (a migration applied while this process
    runs): the binary batch is refused, the text batch too (the bad row), and row by row,
    in the text format, the good rows go in and the bad one is counted. PostgreSQL's
    refusal of a binary value is a protocol error that psycopg raises like a lost
    connection; it must not be taken for one, which would count the whole batch as lost.
    The table is read again, so the next batch goes as text with the fix said."""
    good = every_field(datetime.datetime.now(datetime.UTC), None)
    assert writer.write([good._replace(request_id="first")], "default").written == 1
    alter("ALTER COLUMN http_status TYPE bigint")
    bad = good._replace(request_id="bad", method="m" * 101)  # longer than its column

    with caplog.at_level("WARNING", logger="django_mcp"), CaptureQueriesContext(connection) as q:
        outcome = writer.write([good, bad, good._replace(request_id="req-8")], "default")
        after = writer.write([good._replace(request_id="req-9")], "default")

    assert (outcome.written, outcome.failed, after.written) == (2, 1, 1)
    assert not any("could not reach" in r.getMessage() for r in caplog.records)
    assert ["BINARY" in s for s in copy_statements(q)] == [True, False, False, False, False, False]
    assert len(drift_warnings(caplog)) == 1
    assert sorted(RequestLog.objects.values_list("request_id", flat=True)) == [
        "first",
        "req-7",
        "req-8",
        "req-9",
    ]


def test_an_address_column_made_text_under_the_process_is_written_as_text(forget_layouts, caplog):
    """``remote_addr`` made ``text`` after the writer read the table: the binary batch's
    address (``inet``'s bytes, not UTF-8) is refused as text (22021), which earns the
    text retry, and the table is read again, so the next batch
    goes as text at once instead of failing binary and going row by row."""
    good = every_field(datetime.datetime.now(datetime.UTC), None)
    assert writer.write([good._replace(request_id="first")], "default").written == 1
    alter("ALTER COLUMN remote_addr TYPE text")

    with caplog.at_level("WARNING", logger="django_mcp"), CaptureQueriesContext(connection) as q:
        outcome = writer.write([good, good._replace(request_id="req-8")], "default")
        after = writer.write([good._replace(request_id="req-9")], "default")

    assert (outcome.written, outcome.failed, after.written, after.failed) == (2, 0, 1, 0)
    assert ["BINARY" in s for s in copy_statements(q)] == [True, False, False]
    assert not any("one by one" in r.getMessage() for r in caplog.records)
    written = RequestLog.objects.exclude(request_id="first")  # "first" was cast by ALTER
    assert set(written.values_list("remote_addr", flat=True)) == {"2001:db8::1"}


class PoolerError(Exception):
    """What psycopg raises for a pooler's failure: SQLSTATE 08P01, as PgBouncer reports
    ``query_wait_timeout`` or a server connection lost mid-query."""

    sqlstate = "08P01"


def test_a_pooler_s_protocol_violation_is_not_retried_row_by_row(monkeypatch, caplog):
    """08P01 is also how PgBouncer says the server is gone: the text retry is tried once
    (it may be a binary refusal), then the first row's failure stops the batch, as for
    any unreachable database, rather than one wait per row."""
    from django.db import OperationalError

    attempts: list[bool] = []

    def pooler_down(rows: Any, alias: str, *, binary: bool = True) -> None:
        attempts.append(binary)
        raise OperationalError("query_wait_timeout") from PoolerError()

    monkeypatch.setattr(writer, "insert_rows", pooler_down)
    batch = [every_field(datetime.datetime.now(datetime.UTC), None)] * 50

    with caplog.at_level("WARNING", logger="django_mcp"):
        outcome = writer.write(batch, "default")

    assert (outcome.written, outcome.failed) == (0, 50)
    assert attempts == [True, False, False]  # binary batch, text batch, first row
    assert any("could not reach" in r.getMessage() for r in caplog.records)


def test_a_bad_row_without_a_binary_refusal_costs_no_text_retry_of_its_batch():
    """Only a binary refusal (08P01, 22P03) earns the batch a second try in text; a row
    the column refuses whatever the format goes straight to the row-by-row retry."""
    good = every_field(datetime.datetime.now(datetime.UTC), None)
    bad = good._replace(request_id="bad", method="m" * 101)  # longer than its column

    with CaptureQueriesContext(connection) as queries:
        outcome = writer.write([good, bad], "default")

    assert (outcome.written, outcome.failed) == (1, 1)
    assert ["BINARY" in s for s in copy_statements(queries)] == [True, False, False]


def test_the_text_retry_never_raises_out_of_the_writer(monkeypatch):
    """Whatever fails while deciding on the text retry (a driver module that will not
    import, say), the batch is still accounted for row by row."""

    def broken(*args: Any) -> bool:
        raise ImportError("psycopg")

    monkeypatch.setattr(pgcopy, "copies_binary", broken)
    calls: list[bool] = []
    insert_rows = writer.insert_rows

    def refused_once(rows: Any, alias: str, *, binary: bool = True) -> None:
        calls.append(binary)
        if len(calls) == 1:
            raise DataError("refused") from RefusedBinary()
        insert_rows(rows, alias, binary=binary)

    monkeypatch.setattr(writer, "insert_rows", refused_once)
    record = every_field(datetime.datetime.now(datetime.UTC), None)

    assert writer.write([record], "default").written == 1
    assert calls == [True, False]  # no text batch: straight to the row


class RefusedBinary(Exception):
    sqlstate = "22P03"
