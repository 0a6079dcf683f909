"""Benchmark: the MCP endpoint against a bare Django JSON view, in the same process and run.

Reports requests per second and peak memory per request for each scenario, and the ratio
to the bare view (1.00 = as fast as plain Django). It drives Django's WSGI handler
directly, so it measures django-mcp's own cost, not a network stack. Run:

    PYTHONPATH=. python bench/run.py [--seconds 2]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings")
os.environ.setdefault(
    "DJANGO_MCP_SQLITE", os.path.join(os.environ.get("TMPDIR", "/tmp"), "django-mcp-bench.sqlite3")
)

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}


def environ(
    path: str, method: str, params: dict[str, Any], name: str | None = None
) -> Callable[[], dict[str, Any]]:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": META, **params}}
    ).encode()
    base = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": path,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "wsgi.url_scheme": "http",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_ACCEPT": "application/json, text/event-stream",
        "HTTP_MCP_PROTOCOL_VERSION": "2026-07-28",
        "HTTP_MCP_METHOD": method,
    }
    if name is not None:
        base["HTTP_MCP_NAME"] = name

    def make() -> dict[str, Any]:
        env = dict(base)
        env["wsgi.input"] = io.BytesIO(body)
        return env

    return make


def measure(app: Any, make: Callable[[], dict[str, Any]], seconds: float) -> tuple[float, int]:
    def start_response(status: str, headers: list[Any]) -> None:
        assert status.startswith("200"), status

    for _ in range(50):  # warm up
        b"".join(app(make(), start_response))
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        for _ in range(100):
            b"".join(app(make(), start_response))
        count += 100
    rate = count / (time.perf_counter() - started)
    tracemalloc.start()
    for _ in range(20):
        b"".join(app(make(), start_response))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return rate, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    options = parser.parse_args()

    import django
    from django.conf import settings
    from django.test.utils import override_settings

    django.setup()
    # The request log is measured separately: here only the request path counts.
    override_settings(
        ROOT_URLCONF="bench.urls",
        DJANGO_MCP={
            **settings.DJANGO_MCP,
            "REQUEST_LOG": os.environ.get("BENCH_REQUEST_LOG", "off"),
        },
    ).enable()
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    call_command("migrate", verbosity=0)
    app = get_wsgi_application()
    scenarios = {
        "bare Django JSON view": environ("/bare", "tools/list", {}),
        "server/discover": environ("/mcp", "server/discover", {}),
        "tools/list": environ("/mcp", "tools/list", {}),
        "tools/call whoami": environ(
            "/mcp", "tools/call", {"name": "whoami", "arguments": {}}, "whoami"
        ),
    }
    results = {label: measure(app, make, options.seconds) for label, make in scenarios.items()}
    baseline = results["bare Django JSON view"][0]
    print(f"{'scenario':28} {'req/s':>10} {'vs bare':>8} {'peak KiB':>9}")
    for label, (rate, peak) in results.items():
        print(f"{label:28} {rate:10.0f} {rate / baseline:8.2f} {peak / 1024:9.1f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
