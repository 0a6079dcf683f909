"""Forgetting ``migrate``: the recorder says so once per flush, with the command that fixes
it, and counts every record as failed (docs/guides/records.md, "When something goes
wrong"). System check ``django_mcp.W012`` warns of the same at start-up.

The tables are dropped for the test (``tests.records.support.dropped``) and put back after.
"""

from __future__ import annotations

import logging

import pytest

from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog, ServedRevision
from tests.records.support import best_effort_call, dropped, log_settings, search

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True)  # drops tables (support.dropped)
def test_a_flush_without_the_tables_logs_one_error_naming_migrate(client, caplog):
    with log_settings(REQUEST_LOG_BATCH_SIZE=2):
        for request_id in range(5):  # three batches
            search(client, request_id=request_id)
        best_effort_call(client)  # and a best-effort tally
        with dropped(RequestLog, ServedRevision), caplog.at_level(logging.WARNING, "django_mcp"):
            assert recorder.flush() == 0

    problems = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(problems) == 1, [r.getMessage() for r in problems]
    [error] = problems
    assert error.levelno == logging.ERROR
    assert "python manage.py migrate django_mcp" in error.getMessage()
    assert RequestLog._meta.db_table in error.getMessage()
    # The six requests were not summarised either (counted, not logged a second time).
    assert recorder.stats() == recorder.RecorderStats(
        pending=0, dropped=0, written=0, failed=7, summary_failed=6
    )


def test_a_refused_row_is_still_retried_one_by_one_when_the_table_exists(client, caplog):
    """The missing-table path must not swallow an ordinary refusal: the table is there."""
    search(client)
    with caplog.at_level(logging.WARNING, logger="django_mcp"):
        assert recorder.flush() == 1
    assert "migrate" not in caplog.text
