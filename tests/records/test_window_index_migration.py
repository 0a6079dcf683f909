"""Migration 0005 swaps the plain ``started_at`` index for the window index without
locking a busy log: on PostgreSQL both the build and the drop run ``CONCURRENTLY`` (a plain
``CREATE INDEX`` blocks every write for the minutes it takes at millions of rows), both
ways; on SQLite the same migration runs as plain DDL."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from django_mcp.requestlog.models import WINDOW_INDEX, RequestLog

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("django_mcp", "0004_request_log_fields")
AFTER = ("django_mcp", "0005_request_log_window_index")


def migrate(target: tuple[str, str]) -> list[str]:
    """Migrate django_mcp to ``target``; the SQL it ran."""
    executor = MigrationExecutor(connection)
    with CaptureQueriesContext(connection) as queries:
        executor.migrate([target])
    return [q["sql"] for q in queries.captured_queries]


def latest() -> tuple[str, str]:
    """The app's last migration."""
    [leaf] = MigrationExecutor(connection).loader.graph.leaf_nodes("django_mcp")
    return leaf


def started_at_indexes() -> dict[str, list[str]]:
    """The table's indexes whose first column is ``started_at``, but the partial one."""
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, RequestLog._meta.db_table)
    return {
        name: info["columns"]
        for name, info in found.items()
        if info["index"]
        and info["columns"][:1] == ["started_at"]
        and name != "django_mcp_rl_denied_idx"
    }


def test_0005_replaces_the_started_at_index_and_reverses():
    try:
        backwards = migrate(BEFORE)
        before = started_at_indexes()
        forwards = migrate(AFTER)
        after = started_at_indexes()
    finally:  # back to the latest migration, not just 0005: later tests need its tables
        migrate(latest())

    [plain] = before.values()
    assert plain == ["started_at"]
    assert list(after) == [WINDOW_INDEX]
    if connection.vendor == "postgresql":
        for ran in (backwards, forwards):
            statements = " ".join(ran).upper()
            assert "CREATE INDEX CONCURRENTLY" in statements
            assert "DROP INDEX CONCURRENTLY" in statements
