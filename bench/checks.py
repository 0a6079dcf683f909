"""The two runs that are about correctness over time, not speed: lost records and memory."""

from __future__ import annotations

import importlib.util
import json
import os
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import load, procs, scenarios
from bench.commands import gunicorn, server_env


def importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@dataclass(frozen=True)
class Lossless:
    """Request-log rows against the requests gunicorn's own access log says it served."""

    served: int
    rows: int
    dropped: int | None  # None: not every worker reported its counters
    failed: int | None
    workers_reported: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Memory:
    """Server RSS (all processes of the group) after the first and after all requests."""

    first_requests: int
    total_requests: int
    first_rss_kib: int
    last_rss_kib: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _count_rows(client_name: str) -> int:
    import psycopg

    with psycopg.connect(
        host=os.environ.get("PGHOST", "127.0.0.1"),
        port=os.environ.get("PGPORT", "5432"),
        user=os.environ.get("PGUSER", "postgres"),
        dbname=os.environ.get("PGDATABASE", "django_mcp_bench"),
    ) as connection:
        row = connection.execute(
            "SELECT count(*) FROM django_mcp_requestlog WHERE client_name = %s", (client_name,)
        ).fetchone()
    return int(row[0]) if row else 0


def lossless(seconds: int, logs: Path, workers: int = 2) -> Lossless:
    """Load gunicorn (log on, ``workers`` workers), stop it gracefully, then count.

    The requests carry a client name unique to this run, so the rows counted are this run's
    alone. The served count is gunicorn's access log (the server's own count, not ours);
    each worker writes its recorder counters at exit (bench/gunicorn_conf.py).
    """
    marker = f"bench-lossless-{uuid.uuid4().hex[:12]}"
    stats_dir = logs / "recorder-stats"
    stats_dir.mkdir()
    access_log = logs / "lossless-access.log"
    port = procs.free_port()
    argv = [*gunicorn(port, workers=workers), "--access-logfile", str(access_log)]
    env = server_env("all", BENCH_STATS_DIR=str(stats_dir))
    with procs.running("gunicorn 2 workers log on", argv, env, port, logs) as server:
        load.probe(server, scenarios.TOOLS_CALL, marker)
        load.drive(server, scenarios.TOOLS_CALL, seconds, client_name=marker)
    # running() has stopped the server: the workers flushed their logs on the way out.
    served = sum(
        1 for line in access_log.read_text().splitlines() if '"POST /mcp HTTP/1.1" 200' in line
    )
    reports = [json.loads(path.read_text()) for path in stats_dir.glob("*.json")]
    complete = len(reports) == workers
    return Lossless(
        served=served,
        rows=_count_rows(marker),
        dropped=sum(r["dropped"] for r in reports) if complete else None,
        failed=sum(r["failed"] for r in reports) if complete else None,
        workers_reported=len(reports),
    )


def memory(first: int, total: int, cap_seconds: int, logs: Path) -> Memory:
    """RSS after ``first`` requests and after ``total``, on one gunicorn worker, log on.

    The load runs in short rounds until each count is reached (or ``cap_seconds`` pass, for
    each phase); the counts reported are what was actually served, a little over the ask.
    """
    port = procs.free_port()
    with procs.running("gunicorn memory", gunicorn(port), server_env("all"), port, logs) as server:
        load.probe(server, scenarios.TOOLS_CALL)
        early = load.drive_until(server, scenarios.TOOLS_CALL, first - 1, cap_seconds)
        first_rss = procs.rss_kib(server.pgid)
        late = load.drive_until(server, scenarios.TOOLS_CALL, total - 1 - early, cap_seconds)
        last_rss = procs.rss_kib(server.pgid)
    return Memory(
        first_requests=early + 1,
        total_requests=early + late + 1,
        first_rss_kib=first_rss,
        last_rss_kib=last_rss,
    )
