"""Ratios and the performance targets, printed PASS or MISS (pure functions, tested).

Every target compares two numbers measured in the same run on the same machine, never an
absolute number: on a shared or loaded machine absolute req/s move with the neighbours'
load, while the ratio of two runs a few seconds apart moves much less (and CPU time per
request, which only counts the server's own work, least of all).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

PASS, MISS, SKIPPED = "PASS", "MISS", "skipped"


@dataclass(frozen=True)
class Measurement:
    """One scenario on one server: throughput, latency, server CPU and memory."""

    server: str
    scenario: str
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    cpu_ms_per_request: float
    peak_rss_mib: float
    errors: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def combine(parts: list[Measurement]) -> Measurement:
    """Rounds of one scenario as one measurement: totals for rates, medians for latency."""
    requests = sum(p.requests for p in parts)
    seconds = sum(p.seconds for p in parts)
    cpu_ms = sum(p.cpu_ms_per_request * p.requests for p in parts)
    return Measurement(
        server=parts[0].server,
        scenario=parts[0].scenario,
        requests=requests,
        seconds=round(seconds, 3),
        rps=round(requests / seconds, 1) if seconds else 0.0,
        p50_ms=statistics.median(p.p50_ms for p in parts),
        p99_ms=statistics.median(p.p99_ms for p in parts),
        cpu_ms_per_request=round(cpu_ms / requests, 3) if requests else 0.0,
        peak_rss_mib=max(p.peak_rss_mib for p in parts),
        errors=sum(p.errors for p in parts),
    )


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or None when either is missing or the divisor is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def cpu_per_request_ms(cpu_before: float, cpu_after: float, requests: int) -> float:
    """Milliseconds of server CPU per request between two ``/proc`` readings."""
    return (cpu_after - cpu_before) * 1000 / requests if requests > 0 else 0.0


@dataclass(frozen=True)
class Target:
    """One target: what was measured against what threshold, and the verdict."""

    name: str
    measured: str
    threshold: str
    verdict: str  # PASS, MISS or "skipped"
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def at_least(name: str, value: float | None, minimum: float, note: str = "") -> Target:
    """PASS when ``value >= minimum``; MISS when below or not measured."""
    verdict = PASS if value is not None and round(value, 9) >= minimum else MISS
    return Target(name, _fmt(value), f">= {minimum:.2f}x", verdict, note)


def at_most(name: str, value: float | None, maximum: float, note: str = "") -> Target:
    """PASS when ``value <= maximum``; MISS when above or not measured."""
    verdict = PASS if value is not None and round(value, 9) <= maximum else MISS
    return Target(name, _fmt(value), f"<= {maximum:.2f}x", verdict, note)


def overhead_target(server: str, mcp: Measurement | None, bare: Measurement | None) -> list[Target]:
    """``tools/call`` (log on) against the bare view on the same server: 0.9x req/s, 1.15x CPU."""
    throughput = ratio(mcp and mcp.rps, bare and bare.rps)
    cpu = ratio(mcp and mcp.cpu_ms_per_request, bare and bare.cpu_ms_per_request)
    return [
        at_least(f"{server}: tools/call req/s vs bare view", throughput, 0.9),
        at_most(f"{server}: tools/call CPU/request vs bare view", cpu, 1.15),
    ]


def log_cost_target(server: str, on: Measurement | None, off: Measurement | None) -> Target:
    """The request log's share of CPU per request: log on / log off <= 1.10."""
    cpu = ratio(on and on.cpu_ms_per_request, off and off.cpu_ms_per_request)
    return at_most(f"{server}: request log on vs off, CPU/request", cpu, 1.10)


def lossless_target(rows: int | None, served: int | None, dropped: int | None) -> Target:
    """No record lost: log rows == requests the server says it served, nothing dropped."""
    name = "request log under load: rows == requests served, 0 dropped"
    if rows is None or served is None or dropped is None:
        return Target(name, "not measured", "equal, 0 dropped", MISS)
    measured = f"{rows} rows / {served} served, {dropped} dropped"
    ok = rows == served and dropped == 0 and served > 0
    return Target(name, measured, "equal, 0 dropped", PASS if ok else MISS)


def memory_target(first_kib: int | None, last_kib: int | None, first_n: int, last_n: int) -> Target:
    """RSS after ``last_n`` requests within 10% of RSS after the first ``first_n``."""
    name = f"memory: RSS after {last_n} requests vs after {first_n}"
    growth = ratio(last_kib, first_kib)
    if growth is None:
        return Target(name, "not measured", "within 10%", MISS)
    ok = abs(round(growth - 1.0, 9)) <= 0.10  # rounded: 1.1 - 1.0 is 0.10000000000000009
    measured = f"{growth:.3f}x ({first_kib} KiB -> {last_kib} KiB)"
    return Target(name, measured, "within 10%", PASS if ok else MISS)


def native_asgi_target(native_rps: float | None, sdk_rps: float | None) -> Target:
    """The native ASGI path (``NativeMCP`` under uvicorn, log off) at >= 1.2x the official
    SDK's stateless JSON server, both measured in turn in the same run; "skipped" when the
    SDK did not run (``--no-peers``, or ``mcp`` not installed)."""
    name = "native ASGI path vs official SDK stateless JSON, req/s"
    if sdk_rps is None or native_rps is None:
        return Target(name, "-", ">= 1.20x", SKIPPED, "the official SDK peer did not run")
    return at_least(name, ratio(native_rps, sdk_rps), 1.2)
