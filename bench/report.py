"""What a run found, as text on the terminal, JSON, a Markdown table in the docs, and a chart."""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import chart, scaleout, scenarios
from bench.checks import Lossless, Memory
from bench.scaleout import ScaleOut
from bench.targets import (
    Measurement,
    Target,
    log_cost_target,
    lossless_target,
    memory_target,
    native_asgi_target,
    overhead_target,
    ratio,
)

#: The native path's row measured beside the SDK (bench/servers.py), the target's numerator.
NATIVE_BESIDE_SDK = "uvicorn native beside SDK"
DOCS_START = "<!-- bench:results:start -->"
DOCS_END = "<!-- bench:results:end -->"
PACKAGES = ("django", "django-mcp", "gunicorn", "uvicorn", "daphne", "mcp", "django-mcpz")
#: Which django-mcp server each peer is compared with (same server software, log off).
PEER_BASELINE = {
    "mcp SDK (uvicorn)": "uvicorn log off",
    "django-mcpz (gunicorn)": "gunicorn log off",
}


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment() -> dict[str, Any]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True, check=False)
    return {
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, {cpu}",
        "load_average": Path("/proc/loadavg").read_text().split()[:3],
        "python": platform.python_version(),
        "wrk": (wrk.stdout or wrk.stderr).split("\n", 1)[0].strip(),
        **{package: _version(package) for package in PACKAGES},
    }


def find(rows: list[Measurement], server: str, scenario: str) -> Measurement | None:
    return next((m for m in rows if m.server == server and m.scenario == scenario), None)


def targets(
    rows: list[Measurement], peers: list[Measurement], lossless: Lossless, memory: Memory
) -> list[Target]:
    found: list[Target] = []
    call, bare = scenarios.TOOLS_CALL.name, scenarios.BARE.name
    for kind in ("gunicorn", "uvicorn", "daphne", "uvicorn native", "gunicorn native"):
        on, off = f"{kind} log on", f"{kind} log off"
        found += overhead_target(kind, find(rows, on, call), find(rows, on, bare))
        found.append(log_cost_target(kind, find(rows, on, call), find(rows, off, call)))
    found.append(lossless_target(lossless.rows, lossless.served, lossless.dropped))
    found.append(
        memory_target(
            memory.first_rss_kib, memory.last_rss_kib, memory.first_requests, memory.total_requests
        )
    )
    sdk = find(peers, "mcp SDK (uvicorn)", call)
    native = find(rows, NATIVE_BESIDE_SDK, call)
    found.append(native_asgi_target(native and native.rps, sdk and sdk.rps))
    return found


@dataclass
class Run:
    started: datetime.datetime
    plan: dict[str, Any]
    environment: dict[str, Any]
    measurements: list[Measurement]
    peers: list[Measurement]
    notes: list[str]
    lossless: Lossless
    memory: Memory
    scaleout: ScaleOut = field(default_factory=ScaleOut)
    targets: list[Target] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        started: datetime.datetime,
        plan: dict[str, Any],
        measurements: list[Measurement],
        peers: list[Measurement],
        notes: list[str],
        lossless: Lossless,
        memory: Memory,
        scaled: ScaleOut | None = None,
    ) -> Run:
        scaled = scaled or ScaleOut(skipped="not run")
        env = environment()
        run = cls(started, plan, env, measurements, peers, notes, lossless, memory, scaled)
        run.targets = [
            *targets(measurements, peers, lossless, memory),
            scaleout.cross_worker_target(scaled),
        ]
        return run

    def as_dict(self) -> dict[str, Any]:
        return {
            "started": self.started.isoformat(timespec="seconds"),
            "plan": self.plan,
            "environment": self.environment,
            "measurements": [m.as_dict() for m in self.measurements],
            "peers": [m.as_dict() for m in self.peers],
            "notes": self.notes,
            "lossless": self.lossless.as_dict(),
            "memory": self.memory.as_dict(),
            "scaleout": self.scaleout.as_dict(),
            "targets": [t.as_dict() for t in self.targets],
        }


def _x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def line(m: Measurement) -> str:
    errors = f"  ERRORS {m.errors}" if m.errors else ""
    return (
        f"{m.scenario:30} {m.rps:8.0f} req/s  p50 {m.p50_ms:7.2f} ms  p99 {m.p99_ms:7.2f} ms  "
        f"{m.cpu_ms_per_request:6.3f} ms CPU/req  {m.peak_rss_mib:6.1f} MiB{errors}"
    )


def measurement_rows(run: Run) -> list[list[str]]:
    rows = []
    for m in run.measurements:
        bare = find(run.measurements, m.server, scenarios.BARE.name)
        rows.append(
            [
                m.server,
                m.scenario,
                f"{m.rps:.0f}",
                f"{m.p50_ms:.2f}",
                f"{m.p99_ms:.2f}",
                f"{m.cpu_ms_per_request:.3f}",
                f"{m.peak_rss_mib:.1f}",
                _x(ratio(m.rps, bare and bare.rps)),
                _x(ratio(m.cpu_ms_per_request, bare and bare.cpu_ms_per_request)),
                str(m.errors),
            ]
        )
    return rows


def peer_rows(run: Run) -> list[list[str]]:
    rows = []
    for m in run.peers:
        ours = find(run.measurements, PEER_BASELINE[m.server], scenarios.TOOLS_CALL.name)
        rows.append(
            [
                m.server,
                f"{m.rps:.0f}",
                f"{m.p50_ms:.2f}",
                f"{m.p99_ms:.2f}",
                f"{m.cpu_ms_per_request:.3f}",
                f"{m.peak_rss_mib:.1f}",
                _x(ratio(ours and ours.rps, m.rps)),
                _x(ratio(ours and ours.cpu_ms_per_request, m.cpu_ms_per_request)),
            ]
        )
    return rows


MEASUREMENT_HEADER = [
    "server",
    "scenario",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU ms/req",
    "peak RSS MiB",
    "req/s vs bare",
    "CPU vs bare",
    "errors",
]
PEER_HEADER = [
    "peer",
    "req/s",
    "p50 ms",
    "p99 ms",
    "CPU ms/req",
    "peak RSS MiB",
    "django-mcp req/s ÷ peer",
    "django-mcp CPU ÷ peer",
]
TARGET_HEADER = ["target", "measured", "threshold", "verdict", "note"]


def _table(header: list[str], rows: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=False)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) for r in [header, *rows]
    )


def _target_rows_of(found: list[Target]) -> list[list[str]]:
    return [[t.name, t.measured, t.threshold, t.verdict, t.note] for t in found]


def _target_rows(run: Run) -> list[list[str]]:
    return _target_rows_of(run.targets)


def text(run: Run) -> str:
    parts = [
        "\nResults (ratios are within this run: read them, not the absolute numbers)",
        _table(MEASUREMENT_HEADER, measurement_rows(run), markdown=False),
        "",
        _table(PEER_HEADER, peer_rows(run), markdown=False) if run.peers else "",
        *run.notes,
        "",
        scaleout_text(run.scaleout, with_target=False),
        "",
        "Targets",
        _table(TARGET_HEADER, _target_rows(run), markdown=False),
    ]
    return "\n".join(parts)


def _scaleout_table(result: ScaleOut, markdown: bool) -> str:
    if not result.rows:
        return f"Not run: {result.skipped or 'no rows'}."
    return _table(scaleout.SCALE_HEADER, scaleout.table_rows(result), markdown)


def scaleout_text(result: ScaleOut, with_target: bool = True) -> str:
    """The scale-out section on the terminal (and its target, when printed alone)."""
    parts = [
        f"Scale-out (tools/call add, log on; {scaleout.CONNECTIONS} connections)",
        _scaleout_table(result, markdown=False),
    ]
    if with_target:
        target = scaleout.cross_worker_target(result)
        parts += ["", _table(TARGET_HEADER, _target_rows_of([target]), markdown=False)]
    return "\n".join(parts)


def markdown(run: Run, chart_path: str) -> str:
    env = run.environment
    versions = ", ".join(f"{p} {env[p]}" for p in PACKAGES)
    plan = ", ".join(f"{k} {v}" for k, v in run.plan.items())
    return "\n".join(
        [
            DOCS_START,
            f"*Generated by `python -m bench` on {run.started:%Y-%m-%d %H:%M} UTC.*",
            "",
            f"- Machine: {env['machine']}; load average at the end: "
            f"{' '.join(env['load_average'])} (a loaded, shared machine)",
            f"- Python {env['python']}, {env['wrk']}; {versions}",
            f"- Plan: {plan}",
            "",
            "### Scenarios",
            "",
            _table(MEASUREMENT_HEADER, measurement_rows(run), markdown=True),
            "",
            "### Peers (`tools/call add(1, 2)`, one worker)",
            "",
            _table(PEER_HEADER, peer_rows(run), markdown=True) if run.peers else "None ran.",
            "",
            *[f"- {note}" for note in run.notes],
            "",
            "### Scale-out (`tools/call add`, log on, PostgreSQL, Redis, workers behind one port)",
            "",
            _scaleout_table(run.scaleout, markdown=True),
            "",
            "### Targets",
            "",
            _table(TARGET_HEADER, _target_rows(run), markdown=True),
            "",
            f"![req/s relative to the bare view, per server]({chart_path})",
            DOCS_END,
        ]
    )


def replace_section(document: str, section: str) -> str:
    """Swap the generated section of ``document`` (between the markers) for ``section``."""
    start, end = document.find(DOCS_START), document.find(DOCS_END)
    if start < 0 or end < start:
        raise ValueError("docs/benchmark.md lost its bench:results markers")
    return document[:start] + section + document[end + len(DOCS_END) :]


def write(run: Run, repo: Path) -> list[Path]:
    results = repo / "bench" / "results" / f"{run.started:%Y-%m-%d-%H%M%S}.json"
    results.parent.mkdir(exist_ok=True)
    results.write_text(json.dumps(run.as_dict(), indent=2) + "\n")
    svg = repo / "docs" / "img" / "benchmark.svg"
    svg.parent.mkdir(exist_ok=True)
    bars = []
    for m in run.measurements:
        bare = find(run.measurements, m.server, scenarios.BARE.name)
        if m.server.endswith("log on") and bare is not None and m is not bare:
            bars.append((f"{m.server}: {m.scenario}", ratio(m.rps, bare.rps) or 0.0))
    svg.write_text(chart.bars("req/s relative to the bare Django view on the same server", bars))
    docs = repo / "docs" / "benchmark.md"
    docs.write_text(replace_section(docs.read_text(), markdown(run, "img/benchmark.svg")))
    return [results, svg, docs]
