"""Fixtures of the stdio tests: ``mcp_stdio`` processes (see :mod:`tests.stdio.support`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.stdio.support import SETTINGS, Process, environment_with_ada

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture(scope="module")
def stdio_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of an ``mcp_stdio`` process: a migrated database with user ada."""
    database: Path = tmp_path_factory.mktemp("stdio") / "db.sqlite3"
    return environment_with_ada(SETTINGS, {"DJANGO_MCP_SQLITE": str(database)})


@pytest.fixture
def start(stdio_env: dict[str, str]) -> Iterator[Any]:
    """Start ``mcp_stdio`` processes; each one still running at the end is killed."""
    started: list[Process] = []

    def start_process(*args: str) -> Process:
        started.append(Process(stdio_env, *args))
        return started[-1]

    yield start_process
    for process in started:
        process.kill()
