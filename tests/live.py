"""A real server (Daphne or uvicorn; gunicorn for WSGI) on a loopback port, for tests that
need one. Daphne runs as ``python -m django_mcp.http.daphne``, the way the docs recommend.

:func:`live_server` starts ``<server> testproject.asgi:application`` in a subprocess with the
given settings module and environment on a free 127.0.0.1 port, waits until it answers an
HTTP request (bounded polling, never a fixed sleep), yields a :class:`LiveServer`, and always
stops the process, also when the test fails. :func:`migrate` prepares a database for it.

The settings module, the database and the server are parameters: the interop tests serve
the seeded testproject on SQLite (``tests/interop/conftest.py``), the stream tests a test
URLconf with short keep-alives and the Redis + PostgreSQL pair.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

REPO = Path(__file__).resolve().parents[1]
APPLICATION = "testproject.asgi:application"
#: The same project through django-mcp's native ASGI path (``NativeMCP``).
NATIVE_APPLICATION = "testproject.asgi_native:application"
WSGI_APPLICATION = "testproject.wsgi:application"
#: The same project through django-mcp's native WSGI path (``NativeMCPWSGI``).
NATIVE_WSGI_APPLICATION = "testproject.wsgi_native:application"
START_TIMEOUT = 20.0  # seconds until the server must answer HTTP
STOP_TIMEOUT = 5.0
START_ATTEMPTS = 3
SERVERS = ("daphne", "uvicorn", "gunicorn", "gunicorn-sync")
#: Threads of the one threaded (gthread) gunicorn worker.
GUNICORN_THREADS = 4


@dataclass(frozen=True)
class LiveServer:
    """A running server: ``base_url`` has no path; ``log`` collects its output."""

    kind: str
    base_url: str
    port: int
    log: Path
    process: subprocess.Popen[bytes]
    #: What the server's environment adds (its database), for commands run beside it.
    env: dict[str, str] = field(default_factory=dict)

    def url(self, path: str = "/mcp") -> str:
        return self.base_url + path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def is_running(self) -> bool:
        return self.process.poll() is None


def server_env(settings_module: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server (or ``migrate``) process."""
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE=settings_module,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        PYTHONUNBUFFERED="1",
        DJANGO_MCP_INSECURE="1",  # loopback test servers may use the demo key and DEBUG
    )
    env.update(extra or {})
    return env


def run_python(
    settings_module: str, args: Sequence[str], env: Mapping[str, str] | None = None, *, what: str
) -> None:
    """Run ``python ARGS`` in the environment of a server process (bounded); fail the test
    with its output, naming it ``what``, if it fails."""
    result = subprocess.run(
        [sys.executable, *args],
        env=server_env(settings_module, env),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"{what} failed:\n{result.stdout}\n{result.stderr}")


def migrate(settings_module: str, env: Mapping[str, str] | None = None) -> None:
    """Run ``migrate`` for ``settings_module`` in a subprocess (bounded)."""
    run_python(
        settings_module, ["-m", "django", "migrate", "--noinput", "-v", "0"], env, what="migrate"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def command(kind: str, port: int, application: str = APPLICATION) -> list[str]:
    if kind == "daphne":
        # Daphne as docs/deployment.md recommends: MCP bodies bounded while they arrive.
        daphne = ["-m", "django_mcp.http.daphne", "-b", "127.0.0.1", "-p", str(port)]
        return [sys.executable, *daphne, application]
    if kind == "uvicorn":
        return [
            sys.executable,
            "-m",
            "uvicorn",
            application,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--lifespan",
            "off",
            "--timeout-graceful-shutdown",
            "1",
            # Idle connections outlive the clients' (docs/deployment.md, keep-alive).
            "--timeout-keep-alive",
            "10",
            "--log-level",
            "warning",
        ]
    if kind.startswith("gunicorn"):
        # One worker, so a test sees the whole server: threaded (gthread) or "sync" (one
        # request at a time). WSGI: the testproject's WSGI application unless one is named.
        worker = (
            ["--worker-class", "sync"]
            if kind == "gunicorn-sync"
            else [
                "--worker-class",
                "gthread",
                "--threads",
                str(GUNICORN_THREADS),
            ]
        )
        wsgi_application = WSGI_APPLICATION if application == APPLICATION else application
        return [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            *worker,
            "--graceful-timeout",
            "1",
            # Idle connections outlive the clients' (docs/deployment.md, keep-alive).
            "--keep-alive",
            "10",
            "--log-level",
            "warning",
            wsgi_application,
        ]
    raise ValueError(f"unknown server {kind!r}; choose from {SERVERS}")


#: A discover request: readiness means the whole Django stack answers, not just the socket.
_PROBE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}
_PROBE_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "server/discover",
}


def wait_until_ready(server: LiveServer, probe_path: str) -> str:
    """Poll ``probe_path`` with a discover request until it answers (bounded); return
    ``"ready"``, ``"exited"`` (the process died) or ``"timeout"``."""
    deadline = time.monotonic() + START_TIMEOUT
    body = json.dumps(_PROBE)
    while time.monotonic() < deadline:
        try:
            response = httpx.post(
                server.url(probe_path), content=body, headers=_PROBE_HEADERS, timeout=2.0
            )
            if response.status_code < 500:
                return "ready"
        except httpx.HTTPError:
            pass
        try:
            # Waiting on the process doubles as the pause between attempts.
            server.process.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            continue
        return "exited"
    return "timeout"


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate the process; kill it if it does not exit in time."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT)


def start(
    settings_module: str,
    workdir: Path,
    kind: str,
    env: Mapping[str, str] | None,
    application: str,
    port: int | None = None,
) -> LiveServer:
    port = port or free_port()
    log = workdir / f"{kind}-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command(kind, port, application),
            env=server_env(settings_module, env),
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    return LiveServer(kind, f"http://127.0.0.1:{port}", port, log, process, dict(env or {}))


@contextmanager
def live_server(
    settings_module: str,
    workdir: Path,
    *,
    kind: str = "daphne",
    env: Mapping[str, str] | None = None,
    probe_path: str = "/mcp",
    application: str = APPLICATION,
    port: int | None = None,
) -> Iterator[LiveServer]:
    """Run one server for the ``with`` block; its output goes to ``workdir/<kind>-<port>.log``.

    A port taken by someone else between choosing and binding it costs a retry, not a
    failure (up to ``START_ATTEMPTS`` ports). ``port`` fixes the port, for a server whose
    settings must name its own URL (then a lost port is a failure).
    """
    for attempt in range(1, START_ATTEMPTS + 1):
        server = start(settings_module, workdir, kind, env, application, port)
        try:
            state = wait_until_ready(server, probe_path)
        except BaseException:
            stop(server.process)
            raise
        if state == "ready":
            break
        stop(server.process)
        lost_port = state == "exited" and "address already in use" in server.output().lower()
        if not lost_port or attempt == START_ATTEMPTS or port is not None:
            pytest.fail(f"the {kind} server {state} (port {server.port}):\n{server.output()}")
    try:
        yield server
    finally:
        stop(server.process)
