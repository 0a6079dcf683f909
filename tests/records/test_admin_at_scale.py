"""The request-log admin never counts the whole table, and the dashboard reads only the
hourly summaries (docs/guides/records.md, "At scale").

On PostgreSQL a ``COUNT(*)`` reads every row, so at millions of rows each changelist page
would cost seconds. These tests read the SQL the pages run (``CaptureQueriesContext``)
rather than time them: the count is bounded (a ``LIMIT`` inside it), past the bound the
estimate comes from the planner, not from counting, and no dashboard query names the
log. The times are measured by ``python -m bench.requestlog_admin`` (docs/benchmark.md),
never here.
"""

from __future__ import annotations

import json
import re

import pytest
from django.core.paginator import Paginator
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_mcp import admin_pagination as pagination
from django_mcp.requestlog import summaries
from django_mcp.requestlog.admin import RequestLogAdmin
from django_mcp.requestlog.models import (
    WINDOW_INDEX,
    WINDOW_INDEX_FIELDS,
    RequestLog,
    RequestLogDay,
    RequestLogHour,
)
from tests.records.support import log_row

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:django_mcp_requestlog_changelist"
TABLE = RequestLog._meta.db_table
SUMMARIES = {
    "24h": RequestLogHour._meta.db_table,
    "7d": RequestLogDay._meta.db_table,
    "30d": RequestLogDay._meta.db_table,
}
#: The log's table by its quoted name (the summaries' name starts with it).
LOG_TABLE = re.compile(rf"[\"`]{TABLE}[\"`]")
estimating = pytest.mark.skipif(
    connection.vendor not in pagination.ESTIMATORS, reason="SQLite counts exactly"
)


def counts_of_the_log(queries: CaptureQueriesContext) -> list[str]:
    return [
        q["sql"]
        for q in queries.captured_queries
        if "COUNT(" in q["sql"].upper() and TABLE in q["sql"]
    ]


def unbounded(sql: str) -> bool:
    return re.search(r"\bLIMIT\b", sql, re.IGNORECASE) is None


@estimating
@pytest.mark.parametrize(
    "query",
    [
        {},
        {"started": "all"},
        {"started": "all", "outcome__exact": "ok"},
        {"started": "all", "method": "tools/call"},
        {"started": "all", "q": "search"},
        {"started": "all", "permission_denied__exact": "1"},
    ],
)
def test_no_changelist_page_counts_the_whole_table(admin_client, query):
    for _ in range(3):
        log_row()

    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(reverse(CHANGELIST), query)

    assert response.status_code == 200
    counts = counts_of_the_log(queries)
    assert counts, "the changelist counts its rows, bounded"
    assert [sql for sql in counts if unbounded(sql)] == []
    assert "DISTINCT" not in " ".join(q["sql"] for q in queries.captured_queries).upper()


@estimating
def test_past_the_bound_the_count_is_the_planners_estimate(admin_client, monkeypatch):
    monkeypatch.setattr(pagination.EstimatedCountPaginator, "exact_up_to", 3)
    for _ in range(6):
        log_row()

    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(reverse(CHANGELIST), {"started": "all"})
        filtered = admin_client.get(reverse(CHANGELIST), {"outcome__exact": "ok"})

    # Both at least the bound; never a count that is not bounded.
    assert response.context["cl"].result_count >= 4
    assert filtered.context["cl"].result_count >= 4
    assert [sql for sql in counts_of_the_log(queries) if unbounded(sql)] == []
    statistics = "pg_class" if connection.vendor == "postgresql" else "information_schema"
    assert any(statistics in q["sql"] for q in queries.captured_queries)
    assert any(q["sql"].startswith("EXPLAIN") for q in queries.captured_queries)


class PlanCursor:
    """A DB-API cursor that answers ``EXPLAIN`` with one plan row."""

    def __init__(self, plan: dict[str, object]) -> None:
        self.description = [(name,) for name in plan]
        self.row = tuple(plan.values())

    def execute(self, sql: str, params: object) -> None:
        assert sql.startswith("EXPLAIN ")

    def fetchone(self) -> tuple[object, ...]:
        return self.row


@pytest.mark.parametrize(
    ("plan", "estimate"),
    [
        ({"id": 1, "table": "t", "rows": 50_000, "filtered": 10.0, "Extra": ""}, 5_000),
        ({"id": 1, "table": "t", "rows": 50_000, "Extra": ""}, 50_000),  # MariaDB's
        ({"id": 1, "table": "t", "rows": None, "filtered": None, "Extra": ""}, 0),
    ],
)
def test_a_filtered_mysql_estimate_is_rows_times_filtered(plan, estimate):
    """MySQL's ``EXPLAIN`` says how many rows it will examine and what share it keeps;
    MariaDB's plain ``EXPLAIN`` has no ``filtered``: its rows stand alone."""
    filtered = RequestLog.objects.filter(outcome="ok")

    assert pagination._mysql_rows(filtered, connection, PlanCursor(plan)) == estimate


def test_small_counts_are_exact(admin_client):
    for _ in range(7):
        log_row()

    response = admin_client.get(reverse(CHANGELIST))

    assert response.context["cl"].result_count == 7


# -- the dashboard reads the hourly summaries, never the log -----------------------------


@pytest.mark.parametrize("window", ["24h", "7d", "30d"])
def test_no_dashboard_query_reads_the_request_log(admin_client, window):
    """Every figure comes from the hourly or daily summaries, so a window costs its hours or
    days and targets, not its requests: no query names the log's table."""
    for target in ("search_books", "get_book"):
        log_row(target=target)
    log_row(target="get_book", outcome="protocol_error", error_code=-32602, http_status=400)
    summaries.rebuild(None, "default")

    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(reverse("admin:django_mcp_dashboard"), {"window": window})

    assert response.status_code == 200
    assert response.context["total"] == 3
    assert response.context["error_codes"] == [{"error_code": -32602, "count": 1}]
    sql = [q["sql"] for q in queries.captured_queries]
    summary = SUMMARIES[window]
    assert sum(summary in text for text in sql) >= 3  # the timeline, the targets, the codes
    assert [text for text in sql if LOG_TABLE.search(text)] == []


def test_started_at_has_one_index_the_window_index():
    """0005 replaced the plain ``started_at`` index with the window index, which leads with
    ``started_at``: one index fewer for every insert, none fewer for the list's order."""
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, TABLE)
    leading = sorted(
        name
        for name, info in found.items()
        if info["index"] and info["columns"][:1] == ["started_at"] and not info["primary_key"]
    )
    window = found[WINDOW_INDEX]

    assert window["columns"] == list(WINDOW_INDEX_FIELDS)
    # The window index and the partial index of permission refusals; no plain index.
    assert leading == sorted([WINDOW_INDEX, "django_mcp_rl_denied_idx"])


@estimating
def test_pages_past_a_low_estimate_are_served_whole(admin_client, monkeypatch):
    """``reltuples`` lags a table that grew since autovacuum ran: the pages past a low
    estimate are still served, each whole, with a next page while rows remain; past the
    last row the page is refused as before."""
    monkeypatch.setattr(pagination.EstimatedCountPaginator, "exact_up_to", 3)
    monkeypatch.setattr(pagination, "estimated_rows", lambda queryset: 4)
    monkeypatch.setattr(RequestLogAdmin, "list_per_page", 2)
    for _ in range(9):
        log_row()

    def page(number: int):
        return admin_client.get(reverse(CHANGELIST), {"started": "all", "p": number})

    # (rows on the page, pages offered, entries said) for each page; the estimate alone
    # says 2 pages of 4 entries.
    shown = {}
    for number in (1, 2, 4, 5):
        with CaptureQueriesContext(connection) as queries:
            response = page(number)
        assert response.status_code == 200, number
        cl = response.context["cl"]
        shown[number] = (len(cl.result_list), cl.paginator.num_pages, cl.result_count)
        offsets = [q["sql"] for q in queries.captured_queries if "OFFSET" in q["sql"]]
        assert len(offsets) <= 2, offsets  # the page, and its count settled once

    assert shown == {1: (2, 2, 4), 2: (2, 3, 5), 4: (2, 5, 9), 5: (1, 5, 9)}
    for past in (6, 10**19):  # no row there; and an OFFSET no bigint holds
        beyond = page(past)
        assert beyond.status_code == 302
        assert "e=1" in beyond["Location"]


@estimating
def test_a_settled_count_keeps_orphans_on_their_page(monkeypatch):
    """With ``orphans``, Django folds a short last page into the one before: the count
    settled from a page says so, so no row is shown twice and no page is hidden."""
    monkeypatch.setattr(pagination.EstimatedCountPaginator, "exact_up_to", 3)
    monkeypatch.setattr(pagination, "estimated_rows", lambda queryset: 4)
    for _ in range(9):
        log_row()
    listed = RequestLog.objects.order_by("pk")

    pages = []
    number = 1
    while True:
        paginator = pagination.EstimatedCountPaginator(listed, 2, orphans=1)
        shown = paginator.page(number)
        pages.append([row.pk for row in shown.object_list])
        if not shown.has_next():
            break
        number += 1

    exact = Paginator(listed, 2, orphans=1)
    assert pages == [[row.pk for row in exact.page(n).object_list] for n in exact.page_range]


# -- over the whole log on PostgreSQL: no page reads every row ----------------------------------

postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL plans")
SCALE_ROWS = 50_000
#: A page reads at most the bounded count (10,001) and a page of rows, with some slack.
READ_BOUND = 10_001 + 101 + 1_000


def fill_log(rows: int, seconds_apart: int = 1) -> None:
    """``rows`` rows of the log, ``seconds_apart`` from each other back from now."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {TABLE} (started_at, site, method, target, request_id,
                declared_revision, served_revision, served_how, client_name, client_version,
                username, outcome, http_status, duration_ms, error_message,
                permission_denied, user_agent)
            SELECT now() - (i * %s || ' seconds')::interval, 'mcp', 'tools/call', 'search_books',
                i::text, '2026-07-28', '2026-07-28', 'supported', 'c', '1', '', 'ok', 200,
                (i %% 997)::float, '', false, ''
            FROM generate_series(1, %s) AS i
            """,
            [seconds_apart, rows],
        )
        cursor.execute(f"ANALYZE {TABLE}")


def rows_read(plan: dict[str, object]) -> int:
    """Rows every scan node of an ``EXPLAIN (ANALYZE, FORMAT JSON)`` plan read."""
    total = 0
    if "Scan" in str(plan["Node Type"]):
        loops = int(plan.get("Actual Loops", 1))  # type: ignore[call-overload]
        returned = int(plan.get("Actual Rows", 0))  # type: ignore[call-overload]
        removed = int(plan.get("Rows Removed by Filter", 0))  # type: ignore[call-overload]
        total += (returned + removed) * loops
    for child in plan.get("Plans", []):  # type: ignore[attr-defined]
        total += rows_read(child)
    return total


@postgresql
@pytest.mark.parametrize(
    "query",
    [{"started": "all", "method": "tools/call"}, {"started": "all", "o": "6"}],
    ids=["indexed-filter", "sort-by-duration"],
)
def test_no_page_over_the_whole_log_reads_every_row(admin_client, query) -> None:
    """docs/guides/records.md, "At scale": a click on the duration header over "Any
    time" read and sorted all 50,000 rows; it is ignored there (only the start time, the
    window index's order, sorts). Every query of the page reads a bounded number of rows
    (``EXPLAIN ANALYZE``, not a timing)."""
    assert RequestLogAdmin.list_display[6] == "duration"
    fill_log(SCALE_ROWS)
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(reverse(CHANGELIST), query)
    assert response.status_code == 200
    assert_each_read_is_bounded(queries)


def assert_each_read_is_bounded(queries: CaptureQueriesContext) -> None:
    """Every SELECT of the log among ``queries`` reads at most :data:`READ_BOUND` rows, by
    PostgreSQL's own count (``EXPLAIN ANALYZE``, not a timing)."""
    read = {}
    with connection.cursor() as cursor:
        for captured in queries.captured_queries:
            sql = captured["sql"]
            if TABLE not in sql or not sql.lstrip().upper().startswith("SELECT"):
                continue
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}")
            plan = cursor.fetchone()[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            read[sql[:60]] = rows_read(plan[0]["Plan"])
    assert read
    assert max(read.values()) <= READ_BOUND, read


@pytest.mark.parametrize("column", ["declared_revision", "error_code"])
def test_a_filter_no_index_answers_is_refused_over_the_whole_log(admin_client, column) -> None:
    """The same filters over "Any time" read all 50,000 rows on PostgreSQL (no index leads
    with either column): they are refused there, before any query of the log."""
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(reverse(CHANGELIST), {"started": "all", column: "1"})
    assert response.status_code == 400
    assert not [q for q in queries.captured_queries if TABLE in q["sql"]]
