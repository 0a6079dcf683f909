"""Server processes: start on a free loopback port, measure from ``/proc``, always stop.

Each server runs in its own session (so its own process group): the harness can then read
the CPU time and memory of the whole group (a gunicorn master and its workers together) and
stop every process it started with one ``killpg``, even after Ctrl-C or a failure, from the
``finally`` of :func:`running`. Nothing listens anywhere but 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_STARTUP_SECONDS = 60.0
_STOP_SECONDS = 15.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def group_pids(pgid: int) -> list[int]:
    """Every live process of the group ``pgid``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited while we looked
        if int(fields[2]) == pgid:  # field 5 of stat: the process group
            pids.append(int(entry.name))
    return pids


def cpu_seconds(pgid: int) -> float:
    """User + system CPU time of every live process in the group (stat fields 14 and 15)."""
    ticks = 0
    for pid in group_pids(pgid):
        with contextlib.suppress(OSError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
    return ticks / _CLOCK_TICKS


def _status_kib(pid: int, key: str) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def rss_kib(pgid: int) -> int:
    """Resident memory now, summed over the group (``VmRSS``)."""
    return sum(_status_kib(pid, "VmRSS") for pid in group_pids(pgid))


def peak_rss_kib(pgid: int) -> int:
    """Peak resident memory so far, summed over the group (``VmHWM`` of each process)."""
    return sum(_status_kib(pid, "VmHWM") for pid in group_pids(pgid))


@dataclass
class Server:
    """One started server: its command's process (the group leader) and its URL base."""

    name: str
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def pgid(self) -> int:
        return self.process.pid

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""


def _wait_listening(server: Server) -> None:
    deadline = time.monotonic() + _STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited at start-up:\n{server.log_tail()}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, server.port), 0.5):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{server.name} did not listen within {_STARTUP_SECONDS:.0f}s")


def stop(server: Server) -> None:
    """SIGTERM the whole group (graceful: gunicorn workers flush the log), then SIGKILL."""
    if server.process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pgid, signal.SIGTERM)
        try:
            server.process.wait(_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pgid, signal.SIGKILL)
            server.process.wait(_STOP_SECONDS)
    # Workers outliving their master (they should not) go too.
    deadline = time.monotonic() + _STOP_SECONDS
    while group_pids(server.pgid) and time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pgid, signal.SIGKILL)
        time.sleep(0.1)


@contextlib.contextmanager
def running(
    name: str, argv: list[str], env: dict[str, str], port: int, log_dir: Path
) -> Iterator[Server]:
    """Start ``argv`` (which must bind ``port`` on 127.0.0.1); stop it on any exit."""
    log_path = log_dir / f"{name.replace(' ', '-')}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(name, process, port, log_path)
    try:
        _wait_listening(server)
        yield server
    finally:
        stop(server)
