"""The benchmark harness's pure parts (docs/benchmark.md): reading wrk, ratios, verdicts.

Not the benchmark itself: it starts servers and is run by hand (``scripts/bench``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import runpy
import xml.etree.ElementTree as ET

import pytest

from bench import chart, crossworker, report, scaleout, servers, wrk
from bench.crossworker import CrossWorker
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
    assert 'wrk.headers["Mcp-Name"] = "progress_burst"' in script
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


# -- scale-out (bench/scaleout.py, bench/crossworker.py) ---------------------------------

# /proc/net/tcp with the server listening on 127.0.0.1:40000 (0x9C40), one connection from
# client port 50000 (0xC350) established and an older one from 50001 (0xC351) closing.
PROC_NET_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9C40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1
   1: 0100007F:9C40 0100007F:C351 06 00000000:00000000 00:00000000 00000000     0        0 0 3
   2: 0100007F:C350 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 222 1
   3: 0100007F:9C40 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 333 1
"""


def test_the_socket_of_a_stream_is_the_servers_established_end_of_that_connection():
    """The server's end (local port = the server's) of the stream's connection, never the
    client's own end, the listening socket or another connection."""
    assert crossworker.socket_inode(PROC_NET_TCP, 40000, 50000) == 333
    assert crossworker.socket_inode(PROC_NET_TCP, 50000, 40000) == 222
    assert crossworker.socket_inode(PROC_NET_TCP, 40000, 50001) is None  # not established
    assert crossworker.socket_inode(PROC_NET_TCP, 40000, 50002) is None


def test_sse_messages_are_read_from_complete_events_and_comments_are_skipped():
    lines = [
        b": keep-alive\n",
        b"\n",
        b'data: {"method": "a"}\r\n',
        b"\r\n",
        b'data: {"method":\n',
        b'data: "b"}\n',
        b"\n",
        b'data: {"method": "incomplete"}\n',
    ]
    assert crossworker.sse_messages(lines) == [{"method": "a"}, {"method": "b"}]


def test_the_check_calls_the_fanout_sites_tool_and_listens_to_its_template():
    body = json.loads(crossworker.change_scenario("t1").body())
    assert body["params"]["name"] == "change"
    assert body["params"]["arguments"] == {"tag": "t1"}
    assert crossworker.change_scenario("t1").headers()["Mcp-Name"] == "change"
    listen = json.loads(crossworker.LISTEN.body())
    assert listen["method"] == "subscriptions/listen"
    assert listen["params"]["notifications"] == {"resourceSubscriptions": [crossworker.TEMPLATE]}


def cross(listener=10, publisher=11, delivered=True, detail="d"):
    return scaleout.ScaleOut(cross=CrossWorker(listener, publisher, 1, delivered, 5.0, detail))


def test_the_cross_worker_target_needs_delivery_from_another_worker():
    assert scaleout.cross_worker_target(cross()).verdict == PASS
    assert scaleout.cross_worker_target(cross(delivered=False)).verdict == MISS
    # Delivered, but made on the listener's own worker: proves nothing about fan-out.
    assert scaleout.cross_worker_target(cross(publisher=10)).verdict == MISS
    assert scaleout.cross_worker_target(cross(listener=None)).verdict == MISS
    skipped = scaleout.cross_worker_target(scaleout.ScaleOut(skipped="Redis is not reachable"))
    assert (skipped.verdict, skipped.note) == (SKIPPED, "Redis is not reachable")


def test_scale_out_rows_are_divided_by_one_worker_of_the_same_server():
    rows = [
        scaleout.Scaled("gunicorn", 1, m("gunicorn 1 worker", rps=100, cpu=2.0)),
        scaleout.Scaled("gunicorn", 2, m("gunicorn 2 workers", rps=180, cpu=2.2)),
        scaleout.Scaled("uvicorn", 2, m("uvicorn 2 workers", rps=150, cpu=3.0)),
    ]
    assert scaleout.versus_one_worker(rows, rows[1]) == (pytest.approx(1.8), pytest.approx(1.1))
    assert scaleout.versus_one_worker(rows, rows[2]) == (None, None)  # no 1-worker row
    table = scaleout.table_rows(scaleout.ScaleOut(rows))
    assert [r[:3] for r in table] == [
        ["gunicorn", "1", "100"],
        ["gunicorn", "2", "180"],
        ["uvicorn", "2", "150"],
    ]
    assert [r[7:9] for r in table] == [["1.00", "1.00"], ["1.80", "1.10"], ["n/a", "n/a"]]
    assert scaleout.server_name("uvicorn", 1) == "uvicorn 1 worker"


def test_the_plan_runs_four_workers_in_the_full_run_two_when_quick_none_when_skipped():
    def plan(*argv):
        parser = argparse.ArgumentParser()
        for flag in ("--quick", "--no-peers", "--no-scaleout"):
            parser.add_argument(flag, action="store_true")
        for option in ("--seconds", "--rounds", "--memory-first", "--memory-total"):
            parser.add_argument(option, type=int)
        parser.add_argument("--lossless-seconds", type=int)
        return servers.Plan.from_args(parser.parse_args(argv))

    assert plan().scaleout_workers == (1, 2, 4)
    assert plan("--quick").scaleout_workers == (1, 2)
    assert plan("--no-scaleout").scaleout_workers == ()
    with pytest.raises(SystemExit):
        servers.main(["--no-scaleout", "--only-scaleout"])


def test_the_report_carries_the_scale_out_section_and_its_target():
    rows = [scaleout.Scaled("uvicorn", 1, m("uvicorn 1 worker", TOOLS_CALL.name))]
    environment = {
        "machine": "test",
        "load_average": ["1", "1", "1"],
        "python": "3",
        "wrk": "wrk",
        **dict.fromkeys(report.PACKAGES, "1"),
    }
    lossless = report.Lossless(served=10, rows=10, dropped=0, failed=0, workers_reported=2)
    run = report.Run(
        datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
        {},
        environment,
        [],
        [],
        [],
        lossless,
        report.Memory(1, 2, 3, 4),
        scaleout.ScaleOut(rows, CrossWorker(1, 2, 1, True, 5.0, "ok")),
    )
    assert "### Scale-out" in report.markdown(run, "chart.svg")
    assert "| uvicorn | 1 |" in report.markdown(run, "chart.svg")
    assert "Scale-out" in report.text(run)
    saved = json.loads(json.dumps(run.as_dict()))
    assert saved["scaleout"]["rows"][0]["workers"] == 1
    assert saved["scaleout"]["cross_worker"]["delivered"] is True
    alone = report.scaleout_text(run.scaleout)
    assert "PASS" in alone
    assert "Not run: Redis" in report.scaleout_text(scaleout.ScaleOut(skipped="Redis down"))


def test_bench_redis_puts_the_channel_layer_and_cache_on_redis_with_the_runs_prefix(
    monkeypatch,
):
    """Read as a module of its own: the suite's settings are not touched."""
    monkeypatch.setenv("DJANGO_MCP_DB", "postgres")
    monkeypatch.setenv("PGDATABASE", "unused")
    monkeypatch.setenv("BENCH_REDIS", "1")
    monkeypatch.setenv("BENCH_REDIS_PREFIX", "run-7")
    redis = runpy.run_module("testproject.settings_bench")
    layer = redis["CHANNEL_LAYERS"]["default"]
    assert layer["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert layer["CONFIG"]["prefix"] == "run-7"
    assert redis["CACHES"]["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert redis["CACHES"]["default"]["KEY_PREFIX"] == "run-7"
    monkeypatch.delenv("BENCH_REDIS")
    plain = runpy.run_module("testproject.settings_bench")
    assert plain["CHANNEL_LAYERS"]["default"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"
    assert "CACHES" not in plain


def test_every_server_kind_has_its_targets_and_the_native_wsgi_path_is_one():
    """Each kind the harness starts gets the three per-server targets, the native WSGI
    path (gunicorn through ``NativeMCPWSGI``) included, and its suites hold the scenarios
    those targets divide (the bare view and ``tools/call``, with the log on and off)."""
    from bench.commands import NATIVE_WSGI_APP, SERVERS, gunicorn_native
    from bench.scenarios import BARE, LOG_OFF, LOG_ON, SUITES

    assert "gunicorn native" in SERVERS
    assert NATIVE_WSGI_APP in gunicorn_native(8000)
    lossless = report.Lossless(served=10, rows=10, dropped=0, failed=0, workers_reported=2)
    memory = report.Memory(5001, 50001, 100_000, 101_000)
    names = {t.name for t in report.targets([], [], lossless, memory)}
    for kind in SERVERS:
        assert f"{kind}: tools/call CPU/request vs bare view" in names
        assert f"{kind}: request log on vs off, CPU/request" in names
        log_on, log_off = SUITES.get(kind, (LOG_ON, LOG_OFF))
        on, off = {s.name for s in log_on}, {s.name for s in log_off}
        assert {BARE.name, TOOLS_CALL.name} <= on & off
        assert on <= {s.name for s in LOG_ON}  # the harness walks LOG_ON's order


def test_the_two_sides_of_a_comparison_take_turns_going_first():
    """ABBA: a side that always went first showed a bias the log's ratio took for the
    log's cost (bench/servers.py, ``in_turn``)."""
    pair = ("log on", "log off")

    orders = [tuple(servers.in_turn(pair, index)) for index in range(4)]

    assert orders == [pair, pair[::-1], pair, pair[::-1]]
