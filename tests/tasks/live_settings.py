"""Settings of the live tasks tests: the testproject plus ``tests.tasks.liveapp``, with a
fast heartbeat and a short worker timeout (from the environment), no request log, and
SQLite set up for several processes (servers and workers) sharing one file.
"""

from __future__ import annotations

import os

from testproject.settings import *  # noqa: F403
from testproject.settings import DATABASES, DJANGO_MCP, INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.tasks.liveapp"]

DJANGO_MCP = {
    **DJANGO_MCP,
    "TASK_HEARTBEAT_SECONDS": float(os.environ.get("LIVE_TASKS_HEARTBEAT", "0.2")),
    "TASK_WORKER_TIMEOUT": float(os.environ.get("LIVE_TASKS_WORKER_TIMEOUT", "60")),
    "TASK_POLL_INTERVAL_MS": 100,
    "REQUEST_LOG": "off",
}

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Several processes write one file: wait for the lock instead of failing at once, and
    # take it when a transaction begins (a read that later writes cannot deadlock).
    DATABASES["default"]["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
