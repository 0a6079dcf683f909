"""The hot path in-process: N requests through Django's WSGI handler, CPU per request.

``python -m bench`` measures real servers under load, which on a shared machine is noisy.
This drives the benchmark project's WSGI handler directly (no network, no server), with
the same requests and settings (``testproject.settings_bench``, PostgreSQL), so one
scenario's CPU per request can be compared before and after a change, profiled with
``cProfile``, or counted in instructions under ``valgrind --tool=callgrind`` (deterministic:
run it with two values of ``-n`` and divide the difference). Run from the repository root:

    PGDATABASE=django_mcp_bench python -m bench.hotpath --scenario call --log on -n 2000
    python -m bench.hotpath --scenario call --cprofile /tmp/call.prof

With the request log on, the records are flushed inside the measured span, so the writer's
CPU counts (it is part of what a request costs the process). The writer thread's timed
flushes are pushed out of the run (``REQUEST_LOG_FLUSH_INTERVAL`` of an hour): how many
happen would depend on wall time, which valgrind stretches fifty-fold, and each costs a
fixed amount (a transaction, a connection check) that is not per request.
"""

from __future__ import annotations

import argparse
import io
import os
import time
from collections.abc import Callable
from typing import Any

from bench.scenarios import BARE, BARE_ASYNC, TOOLS_CALL, TOOLS_LIST, Scenario

SCENARIOS: dict[str, Scenario] = {
    "bare": BARE,
    "bare-async": BARE_ASYNC,
    "call": TOOLS_CALL,
    "list": TOOLS_LIST,
}


def environ_factory(scenario: Scenario) -> Callable[[], dict[str, Any]]:
    """A fresh WSGI environ for each request (the body stream is consumed)."""
    body = scenario.body().encode()
    base: dict[str, Any] = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": scenario.path,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "HTTP_HOST": "127.0.0.1:8000",  # as every HTTP/1.1 client sends it (wrk does)
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "CONTENT_LENGTH": str(len(body)),
    }
    for name, value in scenario.headers().items():
        key = name.upper().replace("-", "_")
        base[key if key == "CONTENT_TYPE" else f"HTTP_{key}"] = value

    def make() -> dict[str, Any]:
        env = dict(base)
        env["wsgi.input"] = io.BytesIO(body)
        return env

    return make


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="call")
    parser.add_argument("--log", choices=("on", "off"), default="on")
    parser.add_argument("-n", type=int, default=2000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=5, help="report the fastest round")
    parser.add_argument("--warmup", type=int, default=200, help="requests before measuring")
    parser.add_argument(
        "--native",
        action="store_true",
        help="serve through NativeMCPWSGI (testproject/wsgi_native.py), as gunicorn native",
    )
    parser.add_argument("--cprofile", metavar="FILE", help="profile one round into FILE")
    options = parser.parse_args()

    os.environ["BENCH_REQUEST_LOG"] = "all" if options.log == "on" else "off"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings_bench")
    os.environ.setdefault("DJANGO_MCP_INSECURE", "1")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-hotpath-not-secret")

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    from django_mcp.conf import mcp_settings
    from django_mcp.requestlog import recorder

    settings.DEBUG = False
    # Set in place, like DEBUG: override_settings would put a UserSettingsHolder in front
    # of every settings read, which measurably slows Django itself (about 17% more
    # instructions per request under callgrind).
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_LOG_FLUSH_INTERVAL": 3600}
    mcp_settings.reload()
    call_command("migrate", verbosity=0)
    app = get_wsgi_application()
    if options.native:
        from django_mcp.http.native_wsgi import NativeMCPWSGI

        app = NativeMCPWSGI(app)
    make = environ_factory(SCENARIOS[options.scenario])
    expect = SCENARIOS[options.scenario].expect.encode()

    def start_response(status: str, headers: list[Any]) -> None:
        assert status.startswith("200"), status

    def run(n: int) -> None:
        for _ in range(n):
            body = b"".join(app(make(), start_response))
        assert expect in body, body
        recorder.flush()

    run(options.warmup)  # imports, caches, the first connection
    if options.cprofile:
        import cProfile

        cProfile.runctx("run(options.n)", globals(), locals(), options.cprofile)
        return
    best = float("inf")
    for _ in range(options.rounds):
        started = time.process_time()
        run(options.n)
        best = min(best, time.process_time() - started)
    print(
        f"{options.scenario} log {options.log}: {best / options.n * 1e6:.1f} us CPU/request "
        f"(fastest of {options.rounds} rounds of {options.n})"
    )


if __name__ == "__main__":
    main()
