"""What the stdio tests share: ``mcp_stdio`` processes spoken to line by line, on a
migrated SQLite file of their own (``tests.stdio.settings``)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from tests.live import REPO, migrate, server_env

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

SETTINGS = "tests.stdio.settings"
DEADLINE = 30.0  # seconds for one SDK session
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def environment_with_ada(settings: str, extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of ``mcp_stdio`` processes on ``settings``, its database migrated
    and holding the user ada."""
    migrate(settings, extra)
    env = server_env(settings, extra)
    env.pop("DJANGO_MCP_USER", None)
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from django.contrib.auth.models import User; User.objects.create(username='ada')",
        ],
        env=env,
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=60,
    )
    return env


def command(*args: str) -> list[str]:
    return [sys.executable, "manage.py", "mcp_stdio", *args]


def request(id: float | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {"_meta": META, **(params or {})},
    }


class Process:
    """One ``mcp_stdio`` process spoken to line by line."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.popen = subprocess.Popen(
            command(*args),
            env=env,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.popen.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.popen.stdin.write(data + b"\n")
        self.popen.stdin.flush()

    def lines(self) -> Iterator[dict[str, Any]]:
        """Each line written to stdout, parsed (fails on one that is not JSON)."""
        assert self.popen.stdout is not None
        for raw in self.popen.stdout:
            yield json.loads(raw)

    def close_input(self) -> None:
        """Close stdin, as a client that shuts down does (stdout may still be read)."""
        assert self.popen.stdin is not None
        self.popen.stdin.close()
        self.popen.stdin = None

    def kill(self) -> None:
        """End the process if a failed test left it running, and close its pipes."""
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.communicate(timeout=DEADLINE)

    def finish(self) -> tuple[list[dict[str, Any]], str]:
        """Close stdin; the rest of stdout and all of stderr once the process exited 0."""
        stdout, stderr = self.popen.communicate(timeout=DEADLINE)
        assert self.popen.returncode == 0, stderr.decode()
        return [json.loads(line) for line in stdout.splitlines()], stderr.decode()
