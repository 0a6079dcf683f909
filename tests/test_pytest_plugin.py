"""The ``django_mcp`` pytest plugin in a project's own test run (django_mcp/test/pytest_plugin.py).

A run of pytest over a small suite of its own, in a fresh process with only the plugin (its
``pytest11`` entry point, as an installed django-mcp registers it; not this repository's
``tests/conftest.py``), against the test project: the request log's
writer stays in the foreground for every test, so one test's records never land in the
database behind another's back, and nothing is written after the run (when Django has
dropped the test database); a test that wants the rows flushes them. docs/guides/testing.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SUITE = """
import threading

import pytest

from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog


def writer_threads():
    return [t for t in threading.enumerate() if t.name == "django-mcp-recorder"]


@pytest.mark.django_db(transaction=True)
def test_a_call_is_buffered_until_the_test_flushes(mcp_client):
    mcp_client.discover()
    assert RequestLog.objects.count() == 0
    assert recorder.flush() == 1
    assert RequestLog.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_next_test_starts_clean(mcp_client):
    mcp_client.discover()
    assert recorder.flush() == 1
    assert RequestLog.objects.count() == 1


@pytest.mark.django_db
def test_no_writer_thread_runs(mcp_client):
    mcp_client.discover()
    assert writer_threads() == []
"""


@pytest.mark.live
def test_the_plugin_keeps_the_request_log_in_the_foreground(tmp_path: Path) -> None:
    (tmp_path / "test_project_suite.py").write_text(textwrap.dedent(SUITE), encoding="utf-8")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "testproject.settings",
        "DJANGO_MCP_INSECURE": "1",
        "PYTHONPATH": str(REPO),
    }
    env.pop("DJANGO_MCP_DB", None)  # SQLite: the run makes and drops its own test database
    result = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path),
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "3 passed" in output
    assert "could not write" not in output
