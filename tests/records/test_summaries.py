"""The request log's hourly summaries: written with the rows, adding up, counting what the
log samples away, rebuilt from rows, pruned on their own retention.

Requests go through the real HTTP stack where the middleware matters; records built here
stand for many requests spread over hours and latencies, submitted to the real recorder.
"""

from __future__ import annotations

import datetime
import math
import random
import threading
import zoneinfo
from typing import Any

import pytest
from django.db import connection, connections
from django.urls import reverse
from django.utils import timezone

from django_mcp.explorer import stats
from django_mcp.requestlog import histogram, recorder, summaries, tallies
from django_mcp.requestlog.models import RequestLog, RequestLogDay, RequestLogHour
from django_mcp.requestlog.records import RequestRecord
from tests.commands import command_output
from tests.records.support import (
    dropped,
    log_row,
    log_settings,
    search,
    steady_exchange_clock,
    unknown_tool,
)

pytestmark = pytest.mark.django_db

TABLE = RequestLogHour._meta.db_table


def record(**fields: Any) -> RequestRecord:
    values: dict[str, Any] = {
        "started_at": timezone.now(),
        "site": "mcp",
        "method": "tools/call",
        "target": "search_books",
        "request_id": "1",
        "declared_revision": "2026-07-28",
        "served_revision": "2026-07-28",
        "served_how": "supported",
        "client_name": "pytest",
        "client_version": "1",
        "user_id": None,
        "username": "",
        "outcome": "ok",
        "error_code": None,
        "http_status": 200,
        "duration_ms": 2.0,
    }
    values.update(fields)
    return RequestRecord(**values)


def spread(count: int, *, seed: int = 3, hours: int = 30) -> list[RequestRecord]:
    """``count`` records over the last ``hours``, three targets, latencies from 0.01 ms to
    seconds, some tool errors and protocol errors with a code."""
    rng = random.Random(seed)
    now = timezone.now()
    out = []
    for i in range(count):
        target = rng.choice(["search_books", "get_book", "set_price"])
        failed = i % 13 == 0
        out.append(
            record(
                started_at=now - datetime.timedelta(minutes=rng.randrange(hours * 60)),
                target=target,
                outcome=("protocol_error" if i % 2 else "tool_error") if failed else "ok",
                error_code=-32602 if failed and i % 2 else None,
                http_status=200,
                duration_ms=10 ** rng.uniform(-2, 3.5),
            )
        )
    return out


def summary_rows(model: Any = RequestLogHour) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Every summary row, by key, with its counters (the duration's sum rounded)."""
    out = {}
    for row in model.objects.all():
        at = row.hour if model is RequestLogHour else row.day
        key = (at, row.site, row.method, row.target, row.error_code)
        buckets = tuple(getattr(row, column) for column in histogram.COLUMNS)
        out[key] = (row.count, row.errors, round(row.duration_sum, 6), buckets)
    return out


def test_a_flush_writes_each_hour_and_target_with_its_rows(client, monkeypatch):
    steady_exchange_clock(monkeypatch)  # the four requests in one hour
    for request_id in range(3):
        search(client, request_id=request_id)
    unknown_tool(client)

    assert recorder.flush() == 4

    found = {(r.target, r.error_code): r for r in RequestLogHour.objects.all()}
    assert set(found) == {("search_books", 0), ("no_such_tool", -32602)}
    ok, bad = found["search_books", 0], found["no_such_tool", -32602]
    assert (ok.count, ok.errors, bad.count, bad.errors) == (3, 0, 1, 1)
    rows = RequestLog.objects.filter(target="search_books")
    assert ok.duration_sum == pytest.approx(sum(r.duration_ms for r in rows))
    assert sum(getattr(ok, column) for column in histogram.COLUMNS) == 3
    assert ok.hour == tallies.hour_of(rows[0].started_at)


def test_flushes_add_to_the_same_hour_rather_than_replace_it():
    now = timezone.now()
    for _flush in range(3):
        recorder.submit(record(started_at=now, duration_ms=5.0))
        recorder.submit(record(started_at=now, duration_ms=50.0, outcome="tool_error"))
        recorder.flush()

    for row in (RequestLogHour.objects.get(), RequestLogDay.objects.get()):
        assert (row.count, row.errors, row.duration_sum) == (6, 3, pytest.approx(165.0))
        assert getattr(row, histogram.COLUMNS[histogram.bucket(5.0)]) == 3
        assert getattr(row, histogram.COLUMNS[histogram.bucket(50.0)]) == 3
    assert RequestLogDay.objects.get().day == tallies.day_of(now)


def test_a_sampled_log_still_counts_every_request_in_its_summaries(client, monkeypatch):
    steady_exchange_clock(monkeypatch)  # the five requests in one hour
    with log_settings(REQUEST_LOG_SAMPLE_RATE=0.0):
        for request_id in range(4):
            search(client, request_id=request_id)
        unknown_tool(client)  # an error: always logged

        assert recorder.flush() == 1

    assert RequestLog.objects.count() == 1
    by_target = {r.target: r.count for r in RequestLogHour.objects.all()}
    assert by_target == {"search_books": 4, "no_such_tool": 1}


def test_the_errors_mode_counts_successes_in_the_summaries_only(client):
    with log_settings(REQUEST_LOG="errors"):
        search(client)
        recorder.flush()

    assert not RequestLog.objects.exists()
    assert RequestLogHour.objects.get().count == 1


def test_the_off_mode_counts_nothing(client):
    with log_settings(REQUEST_LOG="off"):
        search(client)
        recorder.flush()

    assert not RequestLogHour.objects.exists()


@pytest.mark.django_db(transaction=True)  # drops a table (support.dropped)
def test_a_summary_the_database_refuses_costs_no_row_and_is_counted(caplog):
    recorder.submit(record())
    recorder.submit(record(target="get_book"))
    with dropped(RequestLogHour):  # as if migration 0006 had not run
        assert recorder.flush() == 2

    assert RequestLog.objects.count() == 2
    stats = recorder.stats()
    assert (stats.written, stats.failed, stats.summary_failed) == (2, 0, 2)
    assert "could not add 2 requests to the request log's hourly summaries" in caplog.text


def test_hostile_text_of_an_unlogged_request_is_stored_cleaned():
    with log_settings(REQUEST_LOG="errors"):
        recorder.submit(record(target="a\x00b\ud800", site="s\u202e"))
        recorder.flush()

    row = RequestLogHour.objects.get()
    assert (row.target, row.site) == ("a\ufffdb\ufffd", "s\ufffd")


def test_the_summary_keys_are_as_long_as_the_logs_columns():
    for name, length in tallies._LIMITS.items():
        assert RequestLogHour._meta.get_field(name).max_length == length
        assert RequestLog._meta.get_field(name).max_length == length


def test_the_rebuild_command_counts_what_the_writer_counted():
    for item in spread(600, hours=80):
        recorder.submit(item)
    recorder.flush()
    incremental, daily = summary_rows(), summary_rows(RequestLogDay)
    assert sum(count for count, *_ in incremental.values()) == 600
    assert sum(count for count, *_ in daily.values()) == 600
    assert len({key[0] for key in incremental}) > 60  # many hours
    assert len({key[0] for key in daily}) >= 4  # and days

    output = command_output("mcp_rebuild_log_summaries")

    assert f"Rebuilt {len(incremental)} hourly and {len(daily)} daily summaries" in output
    assert summary_rows() == incremental
    assert summary_rows(RequestLogDay) == daily


#: Targets no two of which are the same name: tool names are case-sensitive (server/tools.mdx
#: "Tool names"), and MySQL's usual collations would take each pair for one.
LOOKALIKES = (
    "Tool",
    "tool",
    "résumé",
    "resume",
    "get_book",
    "get_book ",
    "\U0001f600",
    "\U0001f389",
)


def test_targets_that_differ_only_in_case_accents_or_spaces_are_counted_apart():
    """One hour, one request per target: one summary row each, from the writer and from
    a rebuild alike (migration 0009 makes MySQL and MariaDB compare the keys exactly)."""
    at = timezone.now().replace(minute=5)
    for target in LOOKALIKES:
        recorder.submit(record(target=target, started_at=at))
    recorder.flush()
    written = summary_rows()
    assert sorted(key[3] for key in written) == sorted(LOOKALIKES)
    assert {value[0] for value in written.values()} == {1}

    command_output("mcp_rebuild_log_summaries")

    assert summary_rows() == written


def test_a_rebuild_since_a_date_leaves_earlier_hours_alone():
    for item in spread(300, hours=80):
        recorder.submit(item)
    recorder.flush()
    hours, days = summary_rows(), summary_rows(RequestLogDay)
    since = timezone.now() - datetime.timedelta(hours=30)
    RequestLog.objects.all().delete()  # pruned rows: only a rebuild could lose their hours

    command_output("mcp_rebuild_log_summaries", "--since", since.isoformat())

    cut = tallies.day_of(since)  # a rebuild starts on a UTC day
    kept = {key: value for key, value in hours.items() if key[0] < cut}
    assert kept
    assert summary_rows() == kept
    assert summary_rows(RequestLogDay) == {k: v for k, v in days.items() if k[0] < cut}


def test_an_unreadable_since_is_a_command_error():
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="not a date"):
        command_output("mcp_rebuild_log_summaries", "--since", "last week")


@pytest.mark.parametrize(
    ("since", "time_zone"),
    [
        ("2024-02-30", "UTC"),  # shaped like a date, but no such day
        ("2024-02-30T10:00", "UTC"),
        ("2024-01-01T25:00", "UTC"),
        ("0001-01-01", "Asia/Tokyo"),  # its UTC day is before the calendar's first
        ("9999-12-31T23:00", "America/New_York"),  # its UTC day is after its last
    ],
)
def test_a_since_no_calendar_holds_is_a_command_error(settings, since, time_zone):
    """A date in the right shape that does not exist (or whose UTC day falls off the
    calendar) was a ``ValueError`` or ``OverflowError`` traceback; it is an operator's
    typo, refused in one line like any other unreadable ``--since``."""
    from django.core.management import CommandError

    settings.TIME_ZONE = time_zone
    with pytest.raises(CommandError, match="--since"):
        command_output("mcp_rebuild_log_summaries", "--since", since)


def hour_row(days_ago: float) -> RequestLogHour:
    hour = tallies.hour_of(timezone.now() - datetime.timedelta(days=days_ago))
    return RequestLogHour.objects.create(hour=hour, site="mcp", method="tools/call", count=1)


def day_row(days_ago: float) -> RequestLogDay:
    day = tallies.day_of(timezone.now() - datetime.timedelta(days=days_ago))
    return RequestLogDay.objects.create(day=day, site="mcp", method="tools/call", count=1)


def test_prune_keeps_summaries_for_their_own_longer_retention():
    log_row(days_ago=40)
    hour_row(401)
    day_row(402)
    kept, kept_day = hour_row(40), day_row(40)

    output = command_output("mcp_prune_logs", "--days", "30")

    assert "Deleted 1 request log entries" in output
    assert "and 2 hourly and daily summaries older than" in output
    assert list(RequestLogHour.objects.all()) == [kept]
    assert list(RequestLogDay.objects.all()) == [kept_day]


def test_a_dry_run_counts_the_summaries_prune_deletes_and_deletes_none():
    hour_row(401)
    hour_row(400.5)
    day_row(402)
    hour_row(40)
    day_row(40)

    output = command_output("mcp_prune_logs", "--dry-run")

    assert "and 3 hourly and daily summaries older than" in output
    assert (RequestLogHour.objects.count(), RequestLogDay.objects.count()) == (3, 2)
    assert "and 3 hourly and daily summaries older than" in command_output("mcp_prune_logs")


def test_prune_takes_the_summary_retention_from_settings_or_the_command():
    hour_row(20)
    kept = hour_row(5)
    with log_settings(REQUEST_LOG_SUMMARY_DAYS=60):
        command_output("mcp_prune_logs")
        assert RequestLogHour.objects.count() == 2
        command_output("mcp_prune_logs", "--summary-days", "10")
    assert list(RequestLogHour.objects.all()) == [kept]


@pytest.mark.skipif(
    connection.vendor == "sqlite", reason="concurrent writers need a server database"
)
@pytest.mark.django_db(transaction=True)
def test_two_writers_at_once_add_up_without_losing_an_update():
    """Two threads (two connections, as two processes) upsert the same hour and keys."""
    now = timezone.now()
    batches = [[record(started_at=now, target=f"t{i % 3}") for i in range(30)] for _ in range(20)]
    errors: list[BaseException] = []

    def write(mine: list[list[RequestRecord]]) -> None:
        try:
            for batch in mine:
                summaries.add(batch, "default")
        except BaseException as exc:  # reported by the test below
            errors.append(exc)
        finally:
            connections["default"].close()

    threads = [threading.Thread(target=write, args=(batches[n::2],)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert {r.target: r.count for r in RequestLogHour.objects.all()} == {
        "t0": 200,
        "t1": 200,
        "t2": 200,
    }


def test_the_histograms_p95_is_within_its_bound_of_the_nearest_rank():
    rng = random.Random(11)
    for _case in range(200):
        durations = [10 ** rng.uniform(-1, 4) for _ in range(rng.randrange(1, 400))]
        counts = [0] * histogram.BUCKETS
        for value in durations:
            counts[histogram.bucket(value)] += 1
        exact = sorted(durations)[math.ceil(0.95 * len(durations)) - 1]
        got = histogram.p95(counts)
        assert got is not None
        assert exact / histogram.ERROR_FACTOR <= got <= exact * histogram.ERROR_FACTOR
    assert histogram.p95([0] * histogram.BUCKETS) is None


def test_a_duration_on_a_bound_starts_the_next_bucket_in_python_and_in_sql():
    bound = histogram.BOUNDS[20]
    assert histogram.bucket(bound) == 21
    assert histogram.bucket(math.nextafter(bound, 0)) == 20
    for duration in (bound, math.nextafter(bound, 0), 0.0, 1e9):
        log_row(duration_ms=duration, target=repr(duration))
    summaries.rebuild(None, "default")
    for row in RequestLogHour.objects.all():
        buckets = [getattr(row, column) for column in histogram.COLUMNS]
        assert buckets.index(1) == histogram.bucket(float(row.target))


@pytest.mark.parametrize("window", ["24h", "7d", "30d"])
def test_the_dashboards_numbers_from_summaries_match_the_rows(admin_client, window, monkeypatch):
    """Counts exact, p95 within the histogram's bound of the rows' nearest-rank p95, for
    requests written by the recorder (hours for 24 h, days for 7 and 30 days).

    The dashboard reads ``timezone.now()`` for its window; it is pinned to the instant the
    expected rows are chosen from, else an hour (a UTC day) beginning between the two
    reads moved the window's first bucket and the counts differed."""
    for item in spread(800, hours=24 * 9):
        recorder.submit(item)
    recorder.flush()
    now = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: now)
    _name, since, bucket = stats.window(window, now)
    start = tallies.hour_of(since) if bucket == "hour" else tallies.day_of(since)
    rows = RequestLog.objects.filter(started_at__gte=start)

    response = admin_client.get(reverse("admin:django_mcp_dashboard"), {"window": window})

    context = response.context
    assert context["total"] == rows.count() > 0
    assert context["errors"] == rows.filter(outcome__in=tallies.ERROR_OUTCOMES).count()
    assert context["error_codes"] == [
        {"error_code": -32602, "count": rows.filter(error_code=-32602).count()}
    ]
    for item in context["targets"]:
        mine = rows.filter(method=item.method, target=item.target)
        durations = sorted(mine.values_list("duration_ms", flat=True))
        assert (item.calls, item.errors) == (
            len(durations),
            mine.filter(outcome__in=tallies.ERROR_OUTCOMES).count(),
        )
        assert item.avg_ms == pytest.approx(sum(durations) / len(durations))
        exact = durations[math.ceil(0.95 * len(durations)) - 1]
        assert exact / histogram.ERROR_FACTOR <= item.p95_ms <= exact * histogram.ERROR_FACTOR


def reference_tally(records: list[RequestRecord]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """What each summary key must add up to, record by record, in the plainest way."""
    out: dict[tuple[Any, ...], list[Any]] = {}
    for item in records:
        key = (
            tallies.hour_of(item.started_at),
            item.site,
            item.method,
            item.target,
            item.error_code or 0,
        )
        count, errors, duration, buckets = out.setdefault(key, [0, 0, 0.0, [0] * histogram.BUCKETS])
        buckets[histogram.bucket(item.duration_ms)] += 1
        out[key] = [
            count + 1,
            errors + (item.outcome in tallies.ERROR_OUTCOMES),
            duration + item.duration_ms,
            buckets,
        ]
    return {key: (c, e, round(d, 6), tuple(b)) for key, (c, e, d, b) in out.items()}


def tallied(records: list[RequestRecord]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    return {
        key: (t.count, t.errors, round(t.duration_sum, 6), tuple(t.buckets))
        for key, t in tallies.tally(records).items()
    }


PARIS = zoneinfo.ZoneInfo("Europe/Paris")
ON_THE_HOUR = datetime.datetime(2026, 7, 28, 13, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    "starts",
    [
        # one hour (the common batch): every record shares its hour
        [ON_THE_HOUR + datetime.timedelta(minutes=m) for m in (0, 10, 59, 30)],
        # across an hour's end, out of order
        [ON_THE_HOUR + datetime.timedelta(minutes=m) for m in (-1, 0, 5, -30, 61)],
        # another time zone (hours are UTC's), and two zones in one batch
        [ON_THE_HOUR.astimezone(PARIS) + datetime.timedelta(minutes=m) for m in (0, 59)],
        [ON_THE_HOUR.astimezone(PARIS), ON_THE_HOUR + datetime.timedelta(minutes=70)],
        # naive (USE_TZ = False)
        [datetime.datetime(2026, 7, 28, 13, m) for m in (0, 59, 1)],
        [datetime.datetime(2026, 7, 28, 13, 59), datetime.datetime(2026, 7, 28, 14, 0)],
    ],
)
def test_the_tally_adds_up_each_hour_and_key_as_a_record_by_record_count_does(starts):
    """The tally reuses the last record's hour bounds instead of truncating each start:
    batches across an hour's end, in other time zones and naive must still count each
    record in its own hour."""
    rng = random.Random(7)
    records = [
        record(
            started_at=start,
            target=rng.choice(["a", "b"]),
            outcome=rng.choice(["ok", "tool_error", "protocol_error", "notification"]),
            error_code=rng.choice([None, -32602]),
            duration_ms=10 ** rng.uniform(-2, 3.5),
        )
        for start in starts
        for _copy in range(3)
    ]

    assert tallied(records) == reference_tally(records)
    assert tallies.tally([]) == {}
