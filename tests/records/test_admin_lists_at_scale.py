"""The task and best-effort revision admins never count their whole table, and the task
list reads its newest-first order from an index (docs/guides/tasks.md, "In the admin";
docs/guides/records.md, "At scale").

A busy site keeps every task until its TTL passes, and a client naming itself anew on
every request adds a best-effort revision row each time. As for the request log, these
tests read the SQL the pages run rather than time them.
"""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from django_mcp import admin_pagination as pagination
from django_mcp.requestlog.models import ServedRevision
from django_mcp.tasks.models import CREATED_INDEX, MCPTask

pytestmark = pytest.mark.django_db

estimating = pytest.mark.skipif(
    connection.vendor not in pagination.ESTIMATORS, reason="SQLite counts exactly"
)
LISTS = {
    "admin:django_mcp_mcptask_changelist": MCPTask._meta.db_table,
    "admin:django_mcp_servedrevision_changelist": ServedRevision._meta.db_table,
}


def add_rows(count: int) -> None:
    now = timezone.now()
    for number in range(count):
        MCPTask.objects.create(
            site="mcp",
            owner="user:1",
            tool="add",
            created_at=now,
            last_updated_at=now,
        )
        ServedRevision.objects.create(
            revision="2099-01-01", client_name=f"client {number}", first_seen=now, last_seen=now
        )


def counts_of(table: str, queries: CaptureQueriesContext) -> list[str]:
    return [
        q["sql"]
        for q in queries.captured_queries
        if "COUNT(" in q["sql"].upper() and table in q["sql"]
    ]


@estimating
@pytest.mark.parametrize("changelist", LISTS)
@pytest.mark.parametrize("query", [{}, {"q": "client"}])
def test_no_page_counts_the_whole_table(admin_client, monkeypatch, changelist, query):
    monkeypatch.setattr(pagination.EstimatedCountPaginator, "exact_up_to", 3)
    add_rows(6)

    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(reverse(changelist), query)

    assert response.status_code == 200
    counts = counts_of(LISTS[changelist], queries)
    assert counts, "the changelist counts its rows, bounded"
    assert [sql for sql in counts if not re.search(r"\bLIMIT\b", sql, re.I)] == []


@pytest.mark.parametrize("changelist", LISTS)
def test_small_lists_count_exactly(admin_client, changelist):
    add_rows(4)

    response = admin_client.get(reverse(changelist))

    assert response.status_code == 200
    assert response.context["cl"].result_count == 4
    assert response.context["cl"].full_result_count is None  # no second count


def test_the_task_list_order_has_an_index():
    """The migrations build the index the model declares, on ``created_at`` alone."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, MCPTask._meta.db_table)

    assert constraints[CREATED_INDEX]["index"]
    assert constraints[CREATED_INDEX]["columns"] == ["created_at"]


def test_the_migrations_match_the_models():
    """A model change without its migration would pass every test (the test database is
    built from the migrations) and fail in a project that runs ``makemigrations``."""
    call_command("makemigrations", "django_mcp", check=True, dry_run=True, verbosity=0)


def test_no_task_list_filter_reads_the_whole_table(admin_client):
    """A filter's choices read without the table: the site filter ran ``SELECT DISTINCT
    site`` over every task on every page, defeating the index and the bounded count.
    ``?site=`` still filters."""
    add_rows(2)
    table = MCPTask._meta.db_table

    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(reverse("admin:django_mcp_mcptask_changelist"))

    assert response.status_code == 200
    assert [q["sql"] for q in queries.captured_queries if "DISTINCT" in q["sql"].upper()] == []
    assert table in " ".join(q["sql"] for q in queries.captured_queries)
    assert (
        admin_client.get(reverse("admin:django_mcp_mcptask_changelist"), {"site": "mcp"})
        .context["cl"]
        .result_count
        == 2
    )
