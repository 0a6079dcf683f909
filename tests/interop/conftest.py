"""A real server for the interop tests: the testproject under Daphne on a loopback port.

The ``daphne_server`` fixture starts ``daphne testproject.asgi:application`` on a free
127.0.0.1 port in a subprocess, migrates and seeds a fresh SQLite database for it in a
temporary directory, waits (bounded) until it accepts connections, and always stops it
afterwards. One server is shared by every test of this package.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0  # seconds until the server must accept connections
STOP_TIMEOUT = 10.0


@dataclass(frozen=True)
class LiveServer:
    """A running testproject: ``url`` is its MCP endpoint; ``log`` collects its output."""

    url: str
    port: int
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def server_env(database: Path) -> dict[str, str]:
    """The environment of the server process: SQLite at ``database``, the test settings."""
    env = dict(os.environ)
    env.pop("DJANGO_MCP_DB", None)  # always SQLite, even in the PostgreSQL run of the suite
    env.update(
        DJANGO_SETTINGS_MODULE="testproject.settings",
        DJANGO_MCP_SQLITE=str(database),
        DJANGO_MCP_DEMO="1",  # the bookshop alone, as scripts/demo serves it
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        PYTHONUNBUFFERED="1",
    )
    return env


SETUP_DATABASE = """
import django
from django.core.management import call_command

django.setup()
call_command("migrate", interactive=False, verbosity=0)
call_command("seed_demo")
"""


def setup_database(env: dict[str, str]) -> None:
    """Migrate and seed the server's database in one process (one Django start-up)."""
    result = subprocess.run(
        [sys.executable, "-c", SETUP_DATABASE],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"migrate + seed_demo failed:\n{result.stdout}\n{result.stderr}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Return once ``port`` accepts a connection; fail if the process dies or time runs out."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            pass
        try:
            # Waiting on the process doubles as the pause between attempts.
            process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue
        break
    output = log.read_text(encoding="utf-8", errors="replace")
    state = "exited" if process.poll() is not None else "did not listen in time"
    pytest.fail(f"the testproject server {state} (port {port}):\n{output}")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT)


@pytest.fixture(scope="package")
def daphne_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("live")
    env = server_env(workdir / "db.sqlite3")
    port = free_port()
    log = workdir / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "testproject.asgi:application",
            ],
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        setup_database(env)  # while Daphne starts: it opens no connection before a request
        wait_until_listening(process, port, log)
        yield LiveServer(url=f"http://127.0.0.1:{port}/mcp", port=port, log=log)
    finally:
        stop(process)
