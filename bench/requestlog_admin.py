"""Time the request-log admin and the dashboard at scale: ``python -m bench.requestlog_admin``.

Fill the table first (``scripts/fill_request_log.py --rows N``, same environment). Each
page is fetched through Django's test client as a logged-in superuser (the whole admin
stack: middleware, changelist or dashboard view, paginator, template), once to warm up and
then ``--repeat`` times; the median is printed with PASS or MISS against the target
(200 ms). A measurement, never a test: the suite asserts the SQL instead
(tests/records/test_admin_at_scale.py: bounded counts, no dashboard query on the log).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 200.0

LIST = "admin:django_mcp_requestlog_changelist"
DASHBOARD = "admin:django_mcp_dashboard"

#: (label, query string) of each request-log list page timed.
PAGES = (
    ("list, last 24 hours (default)", {}),
    ("list, any time", {"started": "all"}),
    ("list, any time, page 5", {"started": "all", "p": "5"}),
    ("filter method=prompts/get, any time", {"started": "all", "method": "prompts/get"}),
    ("filter outcome=protocol_error", {"outcome__exact": "protocol_error"}),
    (
        "filter served_how=best-effort, 30 days",
        {"started": "30d", "served_how__exact": "best-effort"},
    ),
    ("filter permission_denied, any time", {"started": "all", "permission_denied__exact": "1"}),
    ("search target prefix 'tool_12'", {"q": "tool_12"}),
    ("search client prefix 'zed', any time", {"q": "zed", "started": "all"}),
)

#: (label, query string) of each dashboard page timed: its three windows.
DASHBOARDS = (
    ("dashboard, last 24 hours (default)", {}),
    ("dashboard, last 7 days", {"window": "7d"}),
    ("dashboard, last 30 days", {"window": "30d"}),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings")
    os.environ.setdefault("DJANGO_MCP_INSECURE", "1")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.urls import reverse

    from django_mcp.requestlog.models import RequestLog

    setup_test_environment()  # ALLOWED_HOSTS gets "testserver"
    users = get_user_model()._default_manager
    admin = users.filter(username="bench-admin").first() or users.create_superuser(
        "bench-admin", "bench@example.com", "unused-password"
    )
    client = Client()
    client.force_login(admin)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(%s)",
            [RequestLog._meta.db_table],
        )
        rows = cursor.fetchone()[0]
    print(f"request log: about {rows:,} rows ({connection.vendor}); target {TARGET_MS:.0f} ms")
    pages = [(label, reverse(LIST), query) for label, query in PAGES]
    pages += [(label, reverse(DASHBOARD), query) for label, query in DASHBOARDS]
    missed = 0
    for label, url, query in pages:
        response = client.get(url, query)
        if response.status_code != 200:
            print(f"{label}: HTTP {response.status_code}")
            missed += 1
            continue
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            client.get(url, query)
            times.append((time.perf_counter() - started) * 1000)
        median = statistics.median(times)
        verdict = "PASS" if median < TARGET_MS else "MISS"
        missed += verdict == "MISS"
        print(f"{verdict}  {median:8.1f} ms  {label}  ({shown(response)})")
    return 1 if missed else 0


def shown(response: Any) -> str:
    """What the page covered: the list's row count, or the dashboard's requests."""
    if "cl" in response.context:
        return f"{response.context['cl'].result_count:,} rows counted or estimated"
    return f"{response.context['total']:,} requests in the window"


if __name__ == "__main__":
    sys.exit(main())
