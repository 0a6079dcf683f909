"""The permission-denied index is partial where the database has partial indexes, and
warns of nothing where it has not (``django_mcp/requestlog/indexes.py``, migration 0010).

Django's ``Index(condition=...)`` makes ``manage.py check`` warn (``models.W037``) on
MySQL and MariaDB; a reusable app must not make a supported database warn."""

from __future__ import annotations

import pytest
from django.db import connection, models
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Q
from django.test.utils import CaptureQueriesContext

from django_mcp.requestlog.indexes import PartialIndex
from django_mcp.requestlog.models import RequestLog

INDEX = "django_mcp_rl_denied_idx"


def denied_index() -> PartialIndex:
    [index] = [i for i in RequestLog._meta.indexes if i.name == INDEX]
    assert isinstance(index, PartialIndex)
    return index


def test_no_partial_indexes_no_warning(monkeypatch):
    """On a database without partial indexes (MySQL, MariaDB) the model checks raise no
    W037: the condition is not where Django's check reads it."""
    monkeypatch.setattr(connection.features, "supports_partial_indexes", False)

    messages = RequestLog.check(databases=["default"])

    assert [m.id for m in messages] == []


@pytest.mark.django_db
def test_the_sql_is_what_django_builds_for_a_condition():
    """Creating the index runs exactly the SQL of Django's own conditional index on this
    database: partial on PostgreSQL and SQLite, plain on MySQL and MariaDB. Migration
    0010 changes only the state because of this."""
    ours = denied_index()
    django_own = models.Index(fields=["-started_at"], name=INDEX, condition=ours.where)

    editor = connection.schema_editor()  # only to build SQL: never entered, runs nothing
    built = str(ours.create_sql(RequestLog, editor))
    expected = str(django_own.create_sql(RequestLog, editor))

    assert built == expected
    if connection.features.supports_partial_indexes:
        assert "WHERE" in built
    else:
        assert "WHERE" not in built


@pytest.mark.django_db
def test_the_migrated_index_is_partial_where_it_can_be():
    """The table the migrations built carries the index, partial where the database
    supports it (PostgreSQL and SQLite keep the predicate in the catalogue)."""
    table = RequestLog._meta.db_table
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, table)
        if connection.vendor == "postgresql":
            cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [INDEX])
            [(definition,)] = cursor.fetchall()
        elif connection.vendor == "sqlite":
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = %s", [INDEX])
            [(definition,)] = cursor.fetchall()
        else:
            definition = ""

    assert found[INDEX]["columns"] == ["started_at"]
    if connection.vendor in ("postgresql", "sqlite"):
        assert "WHERE" in definition
        assert "permission_denied" in definition


@pytest.mark.django_db  # MySQL/MariaDB: the SQL depends on the server's version
def test_building_the_sql_never_changes_the_index(monkeypatch):
    """The index in the model's ``Meta`` is shared: two threads may build SQL from it at
    once, so no build may set its ``condition``, even for a moment (one that did let a
    concurrent build lose its ``WHERE``, and a concurrent check see a condition)."""
    ours = denied_index()
    seen = []
    render = models.Index._get_condition_sql

    def spy(index, model, schema_editor):
        seen.append(ours.condition)
        return render(index, model, schema_editor)

    monkeypatch.setattr(models.Index, "_get_condition_sql", spy)
    ours.create_sql(RequestLog, connection.schema_editor())

    assert seen == [None]


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"fields": ["-started_at"], "name": "x", "where": "permission_denied"}, "Q instance"),
        ({"fields": ["-started_at"], "where": Q(permission_denied=True)}, "must be named"),
        (
            {
                "fields": ["-started_at"],
                "name": "x",
                "where": Q(permission_denied=True),
                "condition": Q(permission_denied=False),
            },
            "where=, not condition=",
        ),
    ],
)
def test_refuses_what_a_conditional_index_refuses(arguments, says):
    """The argument checks Django applies to ``condition`` hold for ``where``."""
    with pytest.raises(ValueError, match=says):
        PartialIndex(**arguments)


def test_deconstructs_and_clones_with_its_condition():
    """Migrations serialise ``where`` and compare indexes by their deconstruction: a
    clone is equal, one with another condition is not (so a change would be migrated)."""
    ours = denied_index()
    path, _args, kwargs = ours.deconstruct()

    assert path == "django_mcp.requestlog.indexes.PartialIndex"
    assert kwargs["where"] == models.Q(permission_denied=True)
    assert "condition" not in kwargs
    assert ours.clone() == ours
    assert PartialIndex(**{**kwargs, "where": models.Q(permission_denied=False)}) != ours


@pytest.mark.django_db(transaction=True)
def test_migration_0010_changes_the_state_and_touches_no_index():
    """0010 swaps ``Index(condition=...)`` for ``PartialIndex`` in the migration state
    only: both build the same index, so a large log is not re-indexed, either way."""
    executor = MigrationExecutor(connection)
    [latest] = executor.loader.graph.leaf_nodes("django_mcp")
    try:
        # Later migrations unapplied first, outside the capture: they may touch indexes.
        executor.migrate([("django_mcp", "0010_request_log_denied_index_without_w037")])
        executor = MigrationExecutor(connection)
        with CaptureQueriesContext(connection) as backwards:
            executor.migrate([("django_mcp", "0009_summary_keys_exact_on_mysql")])
        executor = MigrationExecutor(connection)
        with CaptureQueriesContext(connection) as forwards:
            executor.migrate([("django_mcp", "0010_request_log_denied_index_without_w037")])
    finally:
        MigrationExecutor(connection).migrate([latest])

    ran = [q["sql"].upper() for q in (*backwards.captured_queries, *forwards.captured_queries)]
    assert not [sql for sql in ran if "INDEX" in sql and "DJANGO_MIGRATIONS" not in sql]
    state = executor.loader.project_state(
        ("django_mcp", "0010_request_log_denied_index_without_w037")
    )
    [index] = [
        i for i in state.models["django_mcp", "requestlog"].options["indexes"] if i.name == INDEX
    ]
    assert isinstance(index, PartialIndex)
