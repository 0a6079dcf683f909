"""Under Django's own test runner (``manage.py test``) the request log writes nothing into
the project's database (docs/guides/testing.md, "Without pytest").

The runner points the database alias at a test database, runs the tests and destroys it,
then points the alias back. The background writer keeps records for up to a flush
interval, so records of the last tests were written, after the run, into the project's
own database. Records are now written only to the database they were recorded for
(``django_mcp/requestlog/recorder.py``); the others are counted as failed.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections

from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.records.support import log_settings, plain_record

REPO = Path(__file__).resolve().parents[2]

SETTINGS = """
from testproject.settings import *  # noqa: F403

# Long enough that the last tests' records are still buffered when the run ends.
DJANGO_MCP = {**DJANGO_MCP, "REQUEST_LOG_FLUSH_INTERVAL": 3600}  # noqa: F405
"""

SUITE = """
from django.test import TestCase

from django_mcp.test import MCPClient


class Shop(TestCase):
    def test_a_call(self):
        result = MCPClient().call_tool("search_books", query="dune")
        self.assertFalse(result.is_error)
"""


@pytest.mark.live
def test_manage_py_test_writes_no_record_into_the_projects_database(tmp_path: Path) -> None:
    (tmp_path / "runner_settings.py").write_text(textwrap.dedent(SETTINGS), encoding="utf-8")
    (tmp_path / "runner_suite.py").write_text(textwrap.dedent(SUITE), encoding="utf-8")
    project_db = tmp_path / "project.sqlite3"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "runner_settings",
        "DJANGO_MCP_INSECURE": "1",
        "DJANGO_MCP_SQLITE": str(project_db),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
    }
    env.pop("DJANGO_MCP_DB", None)  # SQLite: the project's database is a file of our own

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(REPO / "manage.py"), *args],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    migrated = manage("migrate", "-v", "0")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    tested = manage("test", "runner_suite", "-v", "1")
    output = tested.stdout + tested.stderr

    assert tested.returncode == 0, output
    assert "Ran 1 test" in output
    with sqlite3.connect(project_db) as database:
        [(rows,)] = database.execute(f"SELECT COUNT(*) FROM {RequestLog._meta.db_table}")
    assert rows == 0, output
    assert "cannot write the request log" not in output


@pytest.mark.django_db
def test_records_of_a_database_the_alias_no_longer_names_are_not_written(monkeypatch, caplog):
    """In process: a record kept while the alias named one database is not written once
    it names another; it is counted as failed, and said so on the ``django_mcp`` logger."""
    recorder.discard()
    with log_settings(REQUEST_LOG_BACKGROUND=False):
        recorder.submit(plain_record())
        monkeypatch.setitem(settings.DATABASES["default"], "NAME", "elsewhere")
        with caplog.at_level("INFO", logger="django_mcp"):
            written = recorder.flush()
        monkeypatch.undo()
        recorder.submit(plain_record())  # recorded for the database named now: written
        again = recorder.flush()

    assert written == 0
    assert again == 1
    assert RequestLog.objects.count() == 1
    assert recorder.stats().failed == 1
    assert recorder.stats().summary_failed == 1  # its request was never summarised either
    assert "discarded 1 request-log records" in caplog.text
    recorder.discard()


class PinnedRouter:
    """Writes go to the alias a thread was pinned to (a tenant router, say): the request's
    thread and the writer's answer differently for the same database."""

    pinned = threading.local()

    def db_for_write(self, model: object, **hints: object) -> str:
        return getattr(self.pinned, "alias", "default")


@pytest.mark.django_db(transaction=True)
def test_a_router_that_answers_by_thread_loses_no_record(settings, monkeypatch):
    """The check compares what the settings name, not the router's answer: a record of a
    request pinned to another alias of the same database is written by a flush from
    another thread (found by a hostile review: it was dropped)."""
    # A second alias of the same database (added in place, as Django's own handler
    # reads the dict it was given; override_settings(DATABASES=...) is unsupported).
    monkeypatch.setitem(settings.DATABASES, "twin", {**settings.DATABASES["default"]})
    settings.DATABASE_ROUTERS = [PinnedRouter()]
    recorder.discard()
    flushed: list[int] = []
    try:
        with log_settings(REQUEST_LOG_BACKGROUND=False):
            PinnedRouter.pinned.alias = "twin"
            recorder.submit(plain_record())
            del PinnedRouter.pinned.alias

            def flush_elsewhere() -> None:  # as the writer thread does, on its own connection
                try:
                    flushed.append(recorder.flush())
                finally:
                    connections.close_all()

            writer = threading.Thread(target=flush_elsewhere)
            writer.start()
            writer.join()
    finally:
        recorder.discard()

    assert flushed == [1]
    assert RequestLog.objects.count() == 1
