"""Driving wrk: the Lua script for one scenario, the command line, and reading its output.

wrk (Debian's ``wrk`` package) is the load generator: written in C, it costs the machine far
less per request than any Python client, so on a two-core box most of the CPU goes to the
server being measured. wrk sends a fixed request, so POST bodies and MCP headers are set in
a generated Lua script, which also prints wrk's summary as one JSON line that
:func:`parse` prefers to the human-readable report (kept as a fallback, and tested).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

#: The marker of the JSON summary line the generated script prints in ``done()``.
JSON_MARKER = "BENCH_WRK_JSON "

_LUA = """\
wrk.method = "POST"
wrk.body = {body}
{headers}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{marker}{{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
"""


def lua_string(value: str) -> str:
    """A Lua string literal for ``value`` (JSON escapes are valid Lua escapes for ASCII)."""
    return json.dumps(value, ensure_ascii=True)


def script(body: str, headers: dict[str, str]) -> str:
    """The Lua script that POSTs ``body`` with ``headers`` and prints the JSON summary.

    It has no "stop after N responses": wrk's ``thread:stop()`` stops sending but leaves the
    connections open until the whole duration ends, and a sync gunicorn worker blocked on
    such a connection is killed by its timeout. Counts are reached in rounds of load
    instead (bench/checks.py).
    """
    lines = "\n".join(f"wrk.headers[{lua_string(k)}] = {lua_string(v)}" for k, v in headers.items())
    return _LUA.format(body=lua_string(body), headers=lines, marker=JSON_MARKER)


def command(url: str, script_path: str, seconds: float, connections: int) -> list[str]:
    """The wrk command line: one thread, ``connections`` connections, a bounded duration."""
    return [
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "--latency",
        "-s",
        script_path,
        url,
    ]


@dataclass(frozen=True)
class WrkResult:
    """What one wrk run measured (latencies in milliseconds)."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int  # socket errors + non-2xx/3xx responses

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else 0.0


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _duration_ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if match is None:
        raise ValueError(f"not a wrk duration: {text!r}")
    return float(match.group(1)) * _UNITS_MS[match.group(2)]


def parse(output: str) -> WrkResult:
    """Read wrk's output: the script's JSON line if present, else wrk's own report."""
    for line in output.splitlines():
        if line.startswith(JSON_MARKER):
            data = json.loads(line[len(JSON_MARKER) :])
            errors = sum(data[k] for k in ("connect", "read", "write", "status", "timeout"))
            return WrkResult(
                requests=data["requests"],
                seconds=data["duration_us"] / 1e6,
                p50_ms=data["p50_us"] / 1000,
                p99_ms=data["p99_us"] / 1000,
                errors=errors,
            )
    return parse_text(output)


def parse_text(output: str) -> WrkResult:
    """Read wrk's human-readable report (run with ``--latency``)."""
    total = re.search(r"^\s*(\d+) requests in ([\d.]+(?:us|ms|s|m))", output, re.M)
    if total is None:
        raise ValueError("wrk output has no 'N requests in T' line:\n" + output)
    percentiles = dict(re.findall(r"^\s*(50|99)(?:\.000)?%\s+([\d.]+(?:us|ms|s|m))", output, re.M))
    if "50" not in percentiles or "99" not in percentiles:
        raise ValueError("wrk output has no latency distribution (run it with --latency)")
    errors = 0
    sockets = re.search(r"Socket errors: (.+)", output)
    if sockets is not None:
        errors += sum(int(n) for n in re.findall(r"\d+", sockets.group(1)))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if non2xx is not None:
        errors += int(non2xx.group(1))
    return WrkResult(
        requests=int(total.group(1)),
        seconds=_duration_ms(total.group(2)) / 1000,
        p50_ms=_duration_ms(percentiles["50"]),
        p99_ms=_duration_ms(percentiles["99"]),
        errors=errors,
    )
