"""The demo's task-capable tool (``stock_report``) runs as a task for a declaring client.

ext-tasks ``specification/2026-07-28/tasks.md``: an optional tool may become a task.
"""

from __future__ import annotations

import pytest

from tests.tasks.support import get, run_worker, start

pytestmark = pytest.mark.django_db


def test_stock_report_as_a_task(client, book):
    task_id = start(client, "stock_report")["taskId"]
    run_worker()
    polled = get(client, task_id)
    assert polled["result"]["content"][0]["text"] == "Frank Herbert: 1"
    assert polled["statusMessage"] == "Frank Herbert"
