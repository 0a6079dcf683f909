"""A real server for the interop tests: the testproject under Daphne on a loopback port.

The ``daphne_server`` fixture migrates and seeds a fresh SQLite database in a temporary
directory, then serves ``testproject.asgi:application`` with Daphne on a free 127.0.0.1
port through :func:`tests.live.live_server` (bounded start-up, always stopped). One server
is shared by every test of this package.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from tests.live import REPO, live_server
from tests.live import server_env as process_env

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

SETTINGS = "testproject.settings"

SETUP_DATABASE = """
import django
from django.core.management import call_command

django.setup()
call_command("migrate", interactive=False, verbosity=0)
call_command("seed_demo")
"""


@dataclass(frozen=True)
class LiveServer:
    """A running testproject: ``url`` is its MCP endpoint; ``log`` collects its output."""

    url: str
    port: int
    log: Path
    #: The server's environment (its database), for commands such as mcp_create_token.
    env: dict[str, str]

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def demo_env(database: Path) -> dict[str, str]:
    """SQLite at ``database`` (even in the PostgreSQL run), the bookshop alone."""
    return {"DJANGO_MCP_SQLITE": str(database), "DJANGO_MCP_DB": "sqlite", "DJANGO_MCP_DEMO": "1"}


def setup_database(env: Mapping[str, str]) -> None:
    """Migrate and seed the server's database in one process (one Django start-up)."""
    result = subprocess.run(
        [sys.executable, "-c", SETUP_DATABASE],
        env=process_env(SETTINGS, env),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"migrate + seed_demo failed:\n{result.stdout}\n{result.stderr}")


@pytest.fixture(scope="package")
def daphne_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("live")
    env = demo_env(workdir / "db.sqlite3")
    setup_database(env)
    with live_server(SETTINGS, workdir, kind="daphne", env=env) as server:
        yield LiveServer(url=server.url("/mcp"), port=server.port, log=server.log, env=env)
