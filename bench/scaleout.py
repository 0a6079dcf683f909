"""Scale-out: ``tools/call add`` at 1, 2 and 4 worker processes behind one port.

gunicorn (sync workers) and uvicorn, each with ``--workers N``, the request log on,
PostgreSQL, and the Redis channel layer and cache (``BENCH_REDIS=1``,
``testproject/settings_bench.py``): the numbers a team sizes a deployment from. For each
server software every worker count runs at once and the loads alternate between them,
round after round, as in the main section, so a neighbour's burst spreads over every ratio.
Then the cross-worker check (:mod:`bench.crossworker`) on uvicorn with two workers.

On a machine with C cores, more than C workers cannot add throughput (and wrk needs a core
too): the ratio to one worker flattens there. That is a number worth printing as well.
"""

from __future__ import annotations

import contextlib
import os
import socket
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import crossworker, load, procs, scenarios
from bench.commands import gunicorn, server_env, uvicorn
from bench.crossworker import CrossWorker
from bench.procs import Server
from bench.targets import MISS, PASS, SKIPPED, Measurement, Target, combine, ratio

#: Worker counts of the full run and of ``--quick``.
WORKERS = (1, 2, 4)
QUICK_WORKERS = (1, 2)
#: wrk connections for every worker count: enough that four workers all get some (uvicorn
#: keeps a connection on the worker that accepted it), the same for 1 worker so the rows
#: differ only in workers.
CONNECTIONS = 16
WARM_UP_SECONDS = 2
REDIS_URL = "redis://127.0.0.1:6379/0"

KINDS: dict[str, Callable[[int, int], list[str]]] = {
    "gunicorn": lambda port, workers: gunicorn(port, workers=workers),
    "uvicorn": lambda port, workers: uvicorn(port, workers=workers),
}


@dataclass(frozen=True)
class Scaled:
    """One server software at one worker count, and what ``tools/call add`` measured."""

    kind: str
    workers: int
    measurement: Measurement

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "workers": self.workers, **self.measurement.as_dict()}


@dataclass(frozen=True)
class ScaleOut:
    """The section's results: rows, the cross-worker check, and why anything was skipped."""

    rows: list[Scaled] = field(default_factory=list)
    cross: CrossWorker | None = None
    skipped: str = ""  # why the section did not run ("" when it ran)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": [row.as_dict() for row in self.rows],
            "cross_worker": self.cross.as_dict() if self.cross else None,
            "skipped": self.skipped,
        }


def server_name(kind: str, workers: int) -> str:
    return f"{kind} {workers} worker{'s' if workers != 1 else ''}"


def versus_one_worker(rows: list[Scaled], row: Scaled) -> tuple[float | None, float | None]:
    """``row``'s req/s and CPU per request divided by one worker's of the same software."""
    one = next((r for r in rows if r.kind == row.kind and r.workers == 1), None)
    if one is None:
        return None, None
    m, base = row.measurement, one.measurement
    return ratio(m.rps, base.rps), ratio(m.cpu_ms_per_request, base.cpu_ms_per_request)


def cross_worker_target(result: ScaleOut) -> Target:
    """PASS when a listen stream on one worker received a change made through another."""
    name = "listen stream on one worker sees a change made through another (uvicorn, Redis)"
    threshold = "received"
    cross = result.cross
    if cross is None:
        return Target(name, "-", threshold, SKIPPED, result.skipped or "did not run")
    if cross.listener_pid is None or cross.publisher_pid is None:
        return Target(name, "not measured", threshold, MISS, cross.detail)
    measured = (
        f"{'received' if cross.delivered else 'not received'}: listener pid "
        f"{cross.listener_pid}, change through pid {cross.publisher_pid}"
    )
    if cross.latency_ms is not None:
        measured += f", {cross.latency_ms:.0f} ms from sending the change"
    crossed = cross.listener_pid != cross.publisher_pid
    verdict = PASS if cross.delivered and crossed else MISS
    return Target(name, measured, threshold, verdict, cross.detail)


def redis_unreachable(url: str) -> str:
    """Why Redis at ``url`` cannot be used ("" when it accepts a connection)."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 6379
    try:
        socket.create_connection((host, port), timeout=2).close()
    except OSError as error:
        return f"Redis is not reachable at {host}:{port} ({error})"
    return ""


def forget_keys(url: str, prefix: str) -> None:
    """Delete what this run left in Redis (channel-layer groups, cache keys)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        for key in client.scan_iter(match=prefix + "*"):
            client.delete(key)
    finally:
        client.close()


@contextlib.contextmanager
def _started(
    kind: str, workers: int, env: dict[str, str], logs: Path
) -> Iterator[tuple[int, Server]]:
    port = procs.free_port()
    argv = KINDS[kind](port, workers)
    # Every worker imports, resolves URLs and connects to PostgreSQL on its first requests:
    # load them all (every connection, for longer) before measuring.
    with load.started(
        server_name(kind, workers), argv, env, port, logs, WARM_UP_SECONDS, CONNECTIONS
    ) as server:
        yield workers, server


def _measure_kind(
    kind: str, workers: tuple[int, ...], seconds: int, rounds: int, env: dict[str, str], logs: Path
) -> list[Scaled]:
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(_started(kind, n, env, logs)) for n in workers]
        parts: dict[int, list[Measurement]] = {}
        for _ in range(rounds):
            for n, server in servers:
                measured = load.measure(server, scenarios.TOOLS_CALL, seconds, CONNECTIONS)
                parts.setdefault(n, []).append(measured)
    rows = [Scaled(kind, n, combine(parts[n])) for n in workers]
    for row in rows:
        print(f"    {row.measurement.server:20} {_line(row.measurement)}", flush=True)
    return rows


def _line(m: Measurement) -> str:
    return f"{m.rps:8.0f} req/s  {m.cpu_ms_per_request:6.3f} ms CPU/req  errors {m.errors}"


def run(workers: tuple[int, ...], seconds: int, rounds: int, logs: Path) -> ScaleOut:
    """The section: every server software at every worker count, then the cross-worker check."""
    url = os.environ.get("BENCH_REDIS_URL", REDIS_URL)
    unreachable = redis_unreachable(url)
    if unreachable:
        print(f"  scale-out skipped: {unreachable}", flush=True)
        return ScaleOut(skipped=unreachable)
    prefix = f"django_mcp_bench_{uuid.uuid4().hex[:12]}"
    env = server_env("all", BENCH_REDIS="1", BENCH_REDIS_URL=url, BENCH_REDIS_PREFIX=prefix)
    try:
        rows: list[Scaled] = []
        for kind in KINDS:
            rows += _measure_kind(kind, workers, seconds, rounds, env, logs)
        print("  cross-worker listen check (uvicorn, 2 workers, Redis)", flush=True)
        port = procs.free_port()
        with procs.running("uvicorn cross-worker", uvicorn(port, workers=2), env, port, logs) as s:
            cross = crossworker.check(s)
        print(f"    {cross.detail}", flush=True)
    finally:
        forget_keys(url, prefix)
    return ScaleOut(rows, cross)


SCALE_HEADER = [
    "server",
    "workers",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU ms/req",
    "peak RSS MiB",
    "req/s vs 1 worker",
    "CPU vs 1 worker",
    "errors",
]


def table_rows(result: ScaleOut) -> list[list[str]]:
    """The section as table rows (text and Markdown share them)."""
    rows = []
    for row in result.rows:
        m = row.measurement
        throughput, cpu = versus_one_worker(result.rows, row)
        rows.append(
            [
                row.kind,
                str(row.workers),
                f"{m.rps:.0f}",
                f"{m.p50_ms:.2f}",
                f"{m.p99_ms:.2f}",
                f"{m.cpu_ms_per_request:.3f}",
                f"{m.peak_rss_mib:.1f}",
                "n/a" if throughput is None else f"{throughput:.2f}",
                "n/a" if cpu is None else f"{cpu:.2f}",
                str(m.errors),
            ]
        )
    return rows
