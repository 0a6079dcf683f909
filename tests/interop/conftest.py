"""A real server for the interop tests: the testproject under Daphne on a loopback port.

The ``daphne_server`` fixture migrates and seeds a fresh SQLite database in a temporary
directory, then serves ``testproject.asgi:application`` with Daphne on a free 127.0.0.1
port through :func:`tests.live.live_server` (bounded start-up, always stopped). One server
is shared by every test of this package; ``daphne_server.url()`` is its MCP endpoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.live import LiveServer, live_server, run_python

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SETTINGS = "testproject.settings"

SETUP_DATABASE = """
import django
from django.core.management import call_command

django.setup()
call_command("migrate", interactive=False, verbosity=0)
call_command("seed_demo")
"""


def demo_env(database: Path) -> dict[str, str]:
    """SQLite at ``database`` (even in the PostgreSQL run), the bookshop alone."""
    return {"DJANGO_MCP_SQLITE": str(database), "DJANGO_MCP_DB": "sqlite", "DJANGO_MCP_DEMO": "1"}


@pytest.fixture(scope="package")
def daphne_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("live")
    env = demo_env(workdir / "db.sqlite3")
    # Migrate and seed in one process (one Django start-up).
    run_python(SETTINGS, ["-c", SETUP_DATABASE], env, what="migrate + seed_demo")
    with live_server(SETTINGS, workdir, kind="daphne", env=env) as server:
        yield server
