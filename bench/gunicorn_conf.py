"""Gunicorn hooks for the benchmark: each worker writes its request-log counters at exit.

The "no record lost" target needs every worker's ``dropped`` counter, which lives in that
worker's memory; ``worker_exit`` runs in the worker after it stops serving, so it flushes
the log (``recorder.shutdown()``) and writes the counters to ``$BENCH_STATS_DIR/<pid>.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def worker_exit(server: Any, worker: Any) -> None:
    directory = os.environ.get("BENCH_STATS_DIR")
    if not directory or worker.pid != os.getpid():
        return  # not the benchmark, or called in the master for a worker that died
    from django_mcp.requestlog import recorder

    recorder.shutdown()
    stats = recorder.stats()
    counters = {
        "pending": stats.pending,
        "dropped": stats.dropped,
        "written": stats.written,
        "failed": stats.failed,
    }
    Path(directory, f"{os.getpid()}.json").write_text(json.dumps(counters))
