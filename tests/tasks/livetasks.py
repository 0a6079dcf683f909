"""Live tasks tests: Daphne servers and real ``manage.py db_worker`` processes sharing one
SQLite file in a temporary directory (``tests.tasks.live_settings``).

:func:`live_tasks` migrates the database and returns the environment every process gets;
:func:`worker` runs one ``db_worker`` for a ``with`` block and always stops it;
:class:`TasksClient` sends the extension's requests over HTTP, declaring the extension in
each request's ``_meta`` (ext-tasks ``specification/2026-07-28/tasks.md``, "Capability
Negotiation"), and polls a task until a condition holds, bounded and at the task's
``pollIntervalMs``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from tests.live import REPO, migrate, server_env, stop
from tests.streams.remote import message, post
from tests.tasks.support import DECLARING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.live import LiveServer

SETTINGS = "tests.tasks.live_settings"
#: How long a task may take to reach the state a test waits for (a bound, not a timing).
WAIT_SECONDS = 20.0
WORKER_OPTIONS = ("--no-reload", "--interval", "0.1", "--no-startup-delay")


def live_tasks(workdir: Path, **extra: str) -> dict[str, str]:
    """Migrate a fresh SQLite database in ``workdir``; the environment of every process."""
    gates = workdir / "gates"
    gates.mkdir()
    env = {
        "DJANGO_MCP_DB": "sqlite",  # also in the PostgreSQL run: the file is this test's own
        "DJANGO_MCP_SQLITE": str(workdir / "db.sqlite3"),
        "LIVE_TASKS_GATES": str(gates),
        **extra,
    }
    migrate(SETTINGS, env)
    return env


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def worker(workdir: Path, env: dict[str, str], name: str = "worker") -> Iterator[Worker]:
    """One ``manage.py db_worker`` (polling every 0.1 s) for the block; always stopped.

    ``--no-reload``: under ``DEBUG`` the worker otherwise runs in a child of Django's
    autoreloader, and stopping (or killing) the process started here would leave that
    child running the task.
    """
    log = workdir / f"{name}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "django", "db_worker", *WORKER_OPTIONS],
            env=server_env(SETTINGS, env),
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        yield Worker(process, log)
    finally:
        stop(process)


class TasksClient:
    """Requests of the Tasks extension to live servers, each declaring the extension."""

    def __init__(self) -> None:
        self.ids = 0

    def request(self, server: LiveServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC response (result or error) of one request."""
        self.ids += 1
        body = message(method, params, id=self.ids, capabilities=DECLARING)
        response = post(server.url(), body)
        assert response.headers["content-type"].startswith("application/json"), response.text
        data: dict[str, Any] = response.json()
        return data

    def result(self, server: LiveServer, method: str, params: dict[str, Any]) -> dict[str, Any]:
        data = self.request(server, method, params)
        assert "result" in data, data
        return data["result"]  # type: ignore[no-any-return]

    def start(self, server: LiveServer, tool: str, arguments: dict[str, Any]) -> str:
        """``tools/call`` of a task tool; the new task's id."""
        created = self.result(server, "tools/call", {"name": tool, "arguments": arguments})
        assert created["resultType"] == "task", created
        return created["taskId"]  # type: ignore[no-any-return]

    def get(self, server: LiveServer, task_id: str) -> dict[str, Any]:
        return self.result(server, "tasks/get", {"taskId": task_id})

    def until(
        self,
        server: LiveServer,
        task_id: str,
        condition: Callable[[dict[str, Any]], bool],
        *,
        what: str,
        logs: Callable[[], str] = lambda: "",
    ) -> dict[str, Any]:
        """Poll ``tasks/get`` at the task's ``pollIntervalMs`` until ``condition`` holds
        (bounded by :data:`WAIT_SECONDS`); the task then."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            task = self.get(server, task_id)
            if condition(task):
                return task
            if time.monotonic() > deadline:
                pytest.fail(f"task never became {what}; last seen {task}\n{logs()}")
            time.sleep(task.get("pollIntervalMs", 100) / 1000)
