"""The server benchmark: django-mcp under gunicorn, uvicorn and Daphne, beside its peers.

    scripts/bench            # the full run (under 10 minutes on 2 cores)
    scripts/bench --quick    # 1-2 minutes
    python -m bench --help   # the same, with the virtualenv you already have

Starts each server on a free 127.0.0.1 port with one worker, with the request log on and
off, drives it with wrk, and prints req/s, p50/p99 latency, server CPU per request, peak
RSS, and the ratio to a bare Django JSON view served by the same server in the same run;
then the scale-out section (1, 2 and 4 workers behind one port, with Redis:
bench/scaleout.py) and the targets, PASS or MISS. Writes ``bench/results/<date>.json``
and regenerates the results section of ``docs/benchmark.md`` and
``docs/img/benchmark.svg``. See docs/benchmark.md for what each number means.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from bench import checks, load, procs, report, scaleout, scenarios
from bench.commands import (
    PYTHON,
    REPO,
    SERVERS,
    gunicorn,
    server_env,
    uvicorn,
    uvicorn_native,
)
from bench.targets import Measurement, combine

T = TypeVar("T")


@dataclass(frozen=True)
class Plan:
    """How long and how much: the full run's numbers, or ``--quick``'s."""

    seconds: int
    rounds: int
    memory_first: int
    memory_total: int
    lossless_seconds: int
    memory_cap_seconds: int
    peers: bool
    scaleout_workers: tuple[int, ...]  # () when --no-scaleout

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Plan:
        quick = args.quick
        return cls(
            seconds=args.seconds or (1 if quick else 3),
            rounds=args.rounds or (1 if quick else 2),
            memory_first=args.memory_first or (500 if quick else 5_000),
            memory_total=args.memory_total or (5_000 if quick else 50_000),
            lossless_seconds=args.lossless_seconds or (3 if quick else 10),
            memory_cap_seconds=40 if quick else 240,
            peers=not args.no_peers,
            scaleout_workers=()
            if args.no_scaleout
            else (scaleout.QUICK_WORKERS if quick else scaleout.WORKERS),
        )


def prepare_database() -> None:
    """Create the benchmark database if missing, migrate it, and add the demo books."""
    import psycopg

    database = os.environ.get("PGDATABASE", "django_mcp_bench")
    with psycopg.connect(
        host=os.environ.get("PGHOST", "127.0.0.1"),
        port=os.environ.get("PGPORT", "5432"),
        user=os.environ.get("PGUSER", "postgres"),
        dbname="postgres",
        autocommit=True,
    ) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (database,)
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{database}"')
    env = server_env("off")
    for command in (["migrate", "--noinput", "-v0"], ["seed_demo"]):
        done = subprocess.run(
            [PYTHON, "manage.py", *command], cwd=REPO, env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {command[0]} failed:\n{done.stderr[-2000:]}")


def in_turn(pair: Sequence[T], index: int) -> Sequence[T]:
    """The two sides of a comparison in the order round ``index`` loads them: first one
    side first, then the other (ABBA over two rounds). Always loading the log-on server
    first made its bare view, which never touches the log, cost 6 to 17% more CPU than the
    same view on the log-off server (two runs, 2026-12-01), a bias the log's ratio took for
    the log's cost."""
    return pair if index % 2 == 0 else pair[::-1]


def run_servers(plan: Plan, logs: Path) -> list[Measurement]:
    """Each server twice at once (log on, log off), loads interleaved, in ``plan.rounds``.

    Interleaving (bare, tools/call, on, off, round after round, which side goes first
    alternating per round, see :func:`in_turn`) spreads a neighbour's burst of load and
    any advantage of going first over both sides of every ratio instead of landing it on
    one.
    """
    results: list[Measurement] = []
    for kind, argv_for in SERVERS.items():
        with contextlib.ExitStack() as stack:
            pairs = []
            log_on, log_off = scenarios.SUITES.get(kind, (scenarios.LOG_ON, scenarios.LOG_OFF))
            for log, suite in (("on", log_on), ("off", log_off)):
                port = procs.free_port()
                env = server_env("all" if log == "on" else "off")
                name = f"{kind} log {log}"
                pairs.append(
                    (
                        stack.enter_context(load.started(name, argv_for(port), env, port, logs)),
                        suite,
                    )
                )
            rounds: dict[tuple[str, str], list[Measurement]] = {}
            for index in range(plan.rounds):
                for scenario in scenarios.LOG_ON:
                    for server, suite in in_turn(pairs, index):
                        if scenario in suite:
                            measurement = load.measure(server, scenario, plan.seconds)
                            rounds.setdefault((server.name, scenario.name), []).append(measurement)
            for parts in rounds.values():
                results.append(combine(parts))
                print(f"    {parts[0].server:18} {report.line(results[-1])}", flush=True)
    return results


def run_native_vs_sdk(plan: Plan, logs: Path) -> tuple[list[Measurement], list[str]]:
    """The official SDK and the native ASGI path (log off, like the SDK), both under
    uvicorn and both running at once, loaded in turn (ABBA, ``2 * plan.rounds`` rounds
    each): the native-path target divides one by the other, so a neighbour's burst of load
    must land on both sides. Returns the native row, then the SDK's."""
    name = "mcp SDK (uvicorn)"
    if not checks.importable("mcp"):
        note = f"{name}: skipped, `mcp` is not installed (pip install .[bench])"
        print(f"  {note}", flush=True)
        return [], [note]
    with contextlib.ExitStack() as stack:
        sdk_port, native_port = procs.free_port(), procs.free_port()
        sdk_argv = uvicorn(sdk_port, "bench.peers.mcp_sdk:app")
        sdk = stack.enter_context(procs.running(name, sdk_argv, server_env("off"), sdk_port, logs))
        native_argv = uvicorn_native(native_port)
        native = stack.enter_context(
            load.started(
                report.NATIVE_BESIDE_SDK, native_argv, server_env("off"), native_port, logs
            )
        )
        load.drive(sdk, scenarios.TOOLS_CALL, 1)
        parts: dict[str, list[Measurement]] = {native.name: [], sdk.name: []}
        for index in range(2 * plan.rounds):
            order = (native, sdk) if index % 2 == 0 else (sdk, native)
            for server in order:
                parts[server.name].append(load.measure(server, scenarios.TOOLS_CALL, plan.seconds))
        results = [combine(parts[native.name]), combine(parts[sdk.name])]
    for measurement in results:
        print(f"    {measurement.server:26} {report.line(measurement)}", flush=True)
    return results, []


def run_peers(plan: Plan, logs: Path) -> tuple[list[Measurement], list[str]]:
    """django-mcpz 1.2 (gunicorn) serving ``add`` (the SDK: :func:`run_native_vs_sdk`)."""
    results: list[Measurement] = []
    notes: list[str] = []
    peers = [
        (
            "django-mcpz (gunicorn)",
            "django_mcpz",
            lambda port: gunicorn(port, "bench.peers.mcpz_wsgi:application"),
        ),
    ]
    for name, module, argv_for in peers:
        if not checks.importable(module):
            notes.append(f"{name}: skipped, `{module}` is not installed (pip install .[bench])")
            print(f"  {notes[-1]}", flush=True)
            continue
        port = procs.free_port()
        env = server_env("off", DJANGO_SETTINGS_MODULE="bench.peers.mcpz_settings")
        with procs.running(name, argv_for(port), env, port, logs) as server:
            load.drive(server, scenarios.TOOLS_CALL, 1)
            measurement = load.measure(server, scenarios.TOOLS_CALL, plan.seconds)
            print(f"    {name:22} {report.line(measurement)}", flush=True)
            results.append(measurement)
    return results, notes


def run_scaleout(plan: Plan, logs: Path) -> scaleout.ScaleOut:
    """The scale-out section (bench/scaleout.py), unless ``--no-scaleout``."""
    if not plan.scaleout_workers:
        return scaleout.ScaleOut(skipped="--no-scaleout")
    print(f"scale-out: tools/call add at {plan.scaleout_workers} workers", flush=True)
    return scaleout.run(plan.scaleout_workers, plan.seconds, plan.rounds, logs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 1-2 minute run")
    parser.add_argument("--seconds", type=int, help="seconds of load per scenario")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (2; --quick 1)")
    parser.add_argument("--memory-first", type=int, help="requests before the first RSS")
    parser.add_argument("--memory-total", type=int, help="requests before the last RSS")
    parser.add_argument("--lossless-seconds", type=int, help="load for the no-lost-record run")
    parser.add_argument("--no-peers", action="store_true", help="skip the SDK and django-mcpz")
    parser.add_argument("--no-scaleout", action="store_true", help="skip the scale-out section")
    parser.add_argument(
        "--only-scaleout", action="store_true", help="run the scale-out section alone (no files)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    args = parser.parse_args(argv)
    if args.no_scaleout and args.only_scaleout:
        parser.error("--no-scaleout and --only-scaleout contradict each other")
    plan = Plan.from_args(args)
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install -y wrk", file=sys.stderr)
        return 2
    # SIGTERM unwinds like Ctrl-C does, through every finally that stops a server.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    started = datetime.datetime.now(datetime.UTC)
    print("preparing the PostgreSQL database", flush=True)
    prepare_database()
    with tempfile.TemporaryDirectory(prefix="django-mcp-bench-logs-") as tmp:
        logs = Path(tmp)
        try:
            if args.only_scaleout:
                print(report.scaleout_text(run_scaleout(plan, logs)))
                return 0
            measurements = run_servers(plan, logs)
            peers, notes = [], ["peers: --no-peers"]
            if plan.peers:
                print("the native ASGI path beside the official SDK (uvicorn)", flush=True)
                beside, notes = run_native_vs_sdk(plan, logs)
                measurements += beside[:1]
                peers, more = run_peers(plan, logs)
                peers = beside[1:] + peers
                notes += more
            print("request log under load (gunicorn, 2 workers)", flush=True)
            lossless = checks.lossless(plan.lossless_seconds, logs)
            print("memory over many requests (gunicorn, log on)", flush=True)
            memory = checks.memory(
                plan.memory_first, plan.memory_total, plan.memory_cap_seconds, logs
            )
            scaled = run_scaleout(plan, logs)
        except Exception:
            print(f"benchmark failed; server logs were in {logs}", file=sys.stderr)
            for log in sorted(logs.glob("*.log")):
                print(f"--- {log.name}\n{log.read_text(errors='replace')[-2000:]}", file=sys.stderr)
            raise
    run = report.Run.build(
        started, plan.__dict__, measurements, peers, notes, lossless, memory, scaled
    )
    print(report.text(run))
    if not args.no_write:
        for path in report.write(run, REPO):
            print(f"wrote {path.relative_to(REPO)}")
    return 0
