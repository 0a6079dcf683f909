"""One measured load: check the answer is right, run wrk, read the server's CPU and memory."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from bench import procs, scenarios, wrk
from bench.procs import Server
from bench.scenarios import Scenario
from bench.targets import Measurement, cpu_per_request_ms

CONNECTIONS = 4


def probe(server: Server, scenario: Scenario, client_name: str = "bench") -> None:
    """One request through urllib first: a benchmark of error responses measures nothing."""
    request = urllib.request.Request(
        server.base_url + scenario.path,
        data=scenario.body(client_name).encode(),
        headers=scenario.headers(),
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, text = response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode(errors="replace")
    if status != 200 or scenario.expect not in text:
        raise RuntimeError(
            f"{server.name} {scenario.name}: expected 200 with {scenario.expect!r}, "
            f"got {status}: {text[:300]}"
        )


def drive(
    server: Server,
    scenario: Scenario,
    seconds: float,
    client_name: str = "bench",
    connections: int = CONNECTIONS,
) -> wrk.WrkResult:
    """Run wrk against ``server`` for ``seconds`` over ``connections`` connections."""
    with tempfile.TemporaryDirectory(prefix="django-mcp-bench-") as tmp:
        script = Path(tmp, "scenario.lua")
        script.write_text(wrk.script(scenario.body(client_name), scenario.headers()))
        argv = wrk.command(server.base_url + scenario.path, str(script), seconds, connections)
        completed = subprocess.run(
            argv, capture_output=True, text=True, timeout=seconds + 60, check=False
        )
    if completed.returncode != 0:
        raise RuntimeError(f"wrk failed ({completed.returncode}): {completed.stderr}")
    return wrk.parse(completed.stdout)


def drive_until(server: Server, scenario: Scenario, requests: int, cap_seconds: float) -> int:
    """Load in 2-second rounds until ``requests`` were served or ``cap_seconds`` passed.

    Returns how many were served (at least ``requests`` unless the cap was hit first).
    """
    served, deadline = 0, time.monotonic() + cap_seconds
    while served < requests and time.monotonic() < deadline:
        served += drive(server, scenario, 2).requests
    return served


def measure(
    server: Server, scenario: Scenario, seconds: float, connections: int = CONNECTIONS
) -> Measurement:
    """Probe, then load ``scenario`` for ``seconds``, reading ``/proc`` before and after."""
    probe(server, scenario)
    cpu_before = procs.cpu_seconds(server.pgid)
    result = drive(server, scenario, seconds, connections=connections)
    cpu_after = procs.cpu_seconds(server.pgid)
    return Measurement(
        server=server.name,
        scenario=scenario.name,
        requests=result.requests,
        seconds=round(result.seconds, 3),
        rps=round(result.rps, 1),
        p50_ms=round(result.p50_ms, 2),
        p99_ms=round(result.p99_ms, 2),
        cpu_ms_per_request=round(cpu_per_request_ms(cpu_before, cpu_after, result.requests), 3),
        peak_rss_mib=round(procs.peak_rss_kib(server.pgid) / 1024, 1),
        errors=result.errors,
    )


@contextlib.contextmanager
def started(
    name: str,
    argv: list[str],
    env: dict[str, str],
    port: int,
    logs: Path,
    warm_up_seconds: float = 1,
    connections: int = CONNECTIONS,
) -> Iterator[Server]:
    """:func:`procs.running`, then ``tools/call`` for ``warm_up_seconds`` before yielding:
    imports, URL resolution and the first DB connection are not steady state."""
    print(f"  starting {name} on {procs.HOST}:{port}", flush=True)
    with procs.running(name, argv, env, port, logs) as server:
        with contextlib.suppress(RuntimeError):
            drive(server, scenarios.TOOLS_CALL, warm_up_seconds, connections=connections)
        yield server
