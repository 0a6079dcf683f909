"""The request-log admin never counts the whole table (docs/guides/records.md, "At scale").

On PostgreSQL a ``COUNT(*)`` reads every row, so at millions of rows each changelist page
would cost seconds. These tests read the SQL the changelist runs (``CaptureQueriesContext``)
rather than time it: the count is bounded (a ``LIMIT`` inside it), and past the bound the
estimate comes from the planner, not from counting.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_mcp.requestlog import pagination
from django_mcp.requestlog.models import RequestLog
from tests.records.support import log_row

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:django_mcp_requestlog_changelist"
TABLE = RequestLog._meta.db_table
postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the estimate is PostgreSQL's"
)


def counts_of_the_log(queries: CaptureQueriesContext) -> list[str]:
    return [
        q["sql"]
        for q in queries.captured_queries
        if "COUNT(" in q["sql"].upper() and TABLE in q["sql"]
    ]


def unbounded(sql: str) -> bool:
    return re.search(r"\bLIMIT\b", sql, re.IGNORECASE) is None


@postgres_only
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


@postgres_only
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
    assert any("pg_class" in q["sql"] for q in queries.captured_queries)
    assert any(q["sql"].startswith("EXPLAIN") for q in queries.captured_queries)


def test_small_counts_are_exact(admin_client):
    for _ in range(7):
        log_row()

    response = admin_client.get(reverse(CHANGELIST))

    assert response.context["cl"].result_count == 7
