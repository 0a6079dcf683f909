"""The benchmark harness's pure parts (docs/benchmark.md): reading wrk, ratios, verdicts.

Not the benchmark itself: it starts servers and is run by hand (``scripts/bench``).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from bench import chart, report, wrk
from bench.scenarios import BARE, PROGRESS_SSE, TOOLS_CALL
from bench.targets import (
    MISS,
    PASS,
    SKIPPED,
    Measurement,
    combine,
    cpu_per_request_ms,
    log_cost_target,
    lossless_target,
    memory_target,
    native_asgi_target,
    overhead_target,
    ratio,
)

WRK_TEXT = """\
Running 3s test @ http://127.0.0.1:40000/mcp
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.12ms    2.01ms  40.10ms   90.00%
    Req/Sec   780.00     50.00   900.00     70.00%
  Latency Distribution
     50%    4.80ms
     75%    5.50ms
     90%    7.00ms
     99%    1.20s
  2345 requests in 3.00s, 1.20MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:    781.67
Transfer/sec:    409.60KB
"""


def m(server="s", scenario="x", rps=100.0, cpu=1.0, requests=1000, seconds=10.0):
    return Measurement(server, scenario, requests, seconds, rps, 1.0, 2.0, cpu, 50.0, 0)


def test_wrk_human_report_is_read_with_units_and_every_error_counted():
    result = wrk.parse_text(WRK_TEXT)
    assert result.requests == 2345
    assert result.seconds == pytest.approx(3.0)
    assert result.p50_ms == pytest.approx(4.8)
    assert result.p99_ms == pytest.approx(1200.0)
    assert result.errors == 2 + 1 + 4
    assert result.rps == pytest.approx(2345 / 3)


def test_wrk_json_line_from_the_script_wins_over_the_human_report():
    line = wrk.JSON_MARKER + json.dumps(
        {
            "requests": 500,
            "duration_us": 2_000_000,
            "p50_us": 1500,
            "p99_us": 9000,
            "connect": 0,
            "read": 0,
            "write": 0,
            "status": 3,
            "timeout": 0,
        }
    )
    result = wrk.parse(WRK_TEXT + line + "\n")
    assert (result.requests, result.seconds, result.p50_ms, result.p99_ms, result.errors) == (
        500,
        2.0,
        1.5,
        9.0,
        3,
    )


def test_wrk_output_without_a_latency_distribution_is_an_error_not_a_zero():
    without = "\n".join(line for line in WRK_TEXT.splitlines() if "%" not in line)
    with pytest.raises(ValueError, match="latency"):
        wrk.parse_text(without)
    with pytest.raises(ValueError, match="requests in"):
        wrk.parse("wrk: connection refused\n")


def test_the_lua_script_carries_the_body_and_headers_escaped():
    script = wrk.script(PROGRESS_SSE.body(), PROGRESS_SSE.headers())
    assert 'wrk.method = "POST"' in script
    assert 'wrk.headers["Mcp-Name"] = "test_tool_with_progress"' in script
    assert "thread:stop" not in script  # it leaves connections open: a sync worker hangs
    body_literal = script.split("wrk.body = ", 1)[1].split("\n", 1)[0]
    assert json.loads(body_literal) == PROGRESS_SSE.body()  # a valid, exact string literal
    assert json.loads(PROGRESS_SSE.body())["params"]["_meta"]["progressToken"] == "bench"


def test_ratios_and_cpu_per_request():
    assert ratio(90, 100) == pytest.approx(0.9)
    assert ratio(None, 100) is None
    assert ratio(1, 0) is None
    assert cpu_per_request_ms(10.0, 10.5, 1000) == pytest.approx(0.5)
    assert cpu_per_request_ms(10.0, 10.5, 0) == 0.0


def test_rounds_combine_into_totals_not_an_average_of_rates():
    combined = combine(
        [m(requests=100, seconds=1.0, cpu=2.0), m(requests=300, seconds=1.0, cpu=1.0)]
    )
    assert combined.requests == 400
    assert combined.rps == pytest.approx(200.0)
    assert combined.cpu_ms_per_request == pytest.approx((200 + 300) / 400)


def test_overhead_target_passes_at_the_thresholds_and_misses_past_them():
    bare = m(rps=1000, cpu=1.0)
    ok = overhead_target("gunicorn", m(rps=900, cpu=1.15), bare)
    assert [t.verdict for t in ok] == [PASS, PASS]
    slow = overhead_target("gunicorn", m(rps=899, cpu=1.16), bare)
    assert [t.verdict for t in slow] == [MISS, MISS]
    assert [t.verdict for t in overhead_target("uvicorn", None, bare)] == [MISS, MISS]


def test_log_cost_target_is_ten_percent_of_cpu():
    assert log_cost_target("daphne", m(cpu=1.10), m(cpu=1.0)).verdict == PASS
    assert log_cost_target("daphne", m(cpu=1.11), m(cpu=1.0)).verdict == MISS


def test_lossless_target_needs_equal_counts_and_nothing_dropped():
    assert lossless_target(780, 780, 0).verdict == PASS
    assert lossless_target(779, 780, 0).verdict == MISS
    assert lossless_target(780, 780, 1).verdict == MISS
    assert lossless_target(0, 0, 0).verdict == MISS  # nothing served proves nothing
    assert lossless_target(780, 780, None).verdict == MISS  # a worker did not report


def test_memory_target_is_ten_percent_either_way():
    assert memory_target(100_000, 110_000, 5000, 50000).verdict == PASS
    assert memory_target(100_000, 110_001, 5000, 50000).verdict == MISS
    assert memory_target(None, 110_000, 5000, 50000).verdict == MISS


def test_native_asgi_target_is_skipped_without_the_sdk_and_judged_with_it():
    assert native_asgi_target(None, None).verdict == SKIPPED
    assert native_asgi_target(600.0, None).verdict == SKIPPED
    assert native_asgi_target(600.0, 500.0).verdict == PASS
    assert native_asgi_target(590.0, 500.0).verdict == MISS


def test_targets_compare_tools_call_with_the_bare_view_of_the_same_server():
    rows = [
        m("gunicorn log on", BARE.name, rps=1000, cpu=1.0),
        m("gunicorn log on", TOOLS_CALL.name, rps=950, cpu=1.1),
        m("gunicorn log off", TOOLS_CALL.name, rps=1000, cpu=1.05),
    ]
    lossless = report.Lossless(served=10, rows=10, dropped=0, failed=0, workers_reported=2)
    memory = report.Memory(5001, 50001, 100_000, 101_000)
    found = {t.name: t.verdict for t in report.targets(rows, [], lossless, memory)}
    assert found["gunicorn: tools/call req/s vs bare view"] == PASS
    assert found["gunicorn: tools/call CPU/request vs bare view"] == PASS
    assert found["gunicorn: request log on vs off, CPU/request"] == PASS
    assert found["uvicorn: tools/call req/s vs bare view"] == MISS  # not measured is a miss


def test_the_native_target_divides_the_native_row_beside_the_sdk_by_the_sdk():
    """The native path measured beside the SDK (not the native server of the main table,
    loaded minutes apart) is the numerator."""
    rows = [
        m("uvicorn native log off", TOOLS_CALL.name, rps=100, cpu=1.0),
        m(report.NATIVE_BESIDE_SDK, TOOLS_CALL.name, rps=650, cpu=1.0),
    ]
    peers = [m("mcp SDK (uvicorn)", TOOLS_CALL.name, rps=500, cpu=1.0)]
    lossless = report.Lossless(served=10, rows=10, dropped=0, failed=0, workers_reported=2)
    memory = report.Memory(5001, 50001, 100_000, 101_000)
    (target,) = [t for t in report.targets(rows, peers, lossless, memory) if "SDK" in t.name]
    assert (target.measured, target.verdict) == ("1.30x", PASS)


def test_the_docs_section_is_replaced_between_its_markers_only():
    document = f"intro\n{report.DOCS_START}\nold\n{report.DOCS_END}\noutro\n"
    new = report.replace_section(document, f"{report.DOCS_START}\nnew\n{report.DOCS_END}")
    assert new == f"intro\n{report.DOCS_START}\nnew\n{report.DOCS_END}\noutro\n"
    with pytest.raises(ValueError, match="markers"):
        report.replace_section("no markers", "x")


def test_the_chart_is_well_formed_svg_with_one_bar_per_value():
    svg = chart.bars("req/s <vs> bare", [("a & b", 0.5), ("c", 1.2)])
    root = ET.fromstring(svg)
    rects = root.findall("{http://www.w3.org/2000/svg}rect")
    assert len(rects) == 1 + 2  # the background and two bars
    assert "req/s &lt;vs&gt; bare" in svg
