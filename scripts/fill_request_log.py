"""Fill the request log with N synthetic rows, for the admin benchmark only.

    DJANGO_MCP_DB=postgres PGDATABASE=requestlog_bench \
        python scripts/fill_request_log.py --rows 10000000
    python -m bench.requestlog_admin         # then time the admin (same environment)
    python scripts/fill_request_log.py --drop  # and drop the bench database's tables

PostgreSQL only: the rows are made by the server itself (``INSERT ... SELECT`` over
``generate_series``), a million at a time, spread over the last 90 days with the mix a
busy server sees (mostly ``tools/call`` and lists, a few errors, rare permission refusals).

The rows are in time order, oldest first, a few seconds of jitter apart from it: the
recorder appends records as they come, so a real log's ``started_at`` follows its physical
order (a fill with random times would scatter every window over the whole table, which no
server produces). For speed, the table's indexes (all but the primary key) are dropped
before the fill and built again after it, in one pass each, which is several times faster
than keeping ten indexes up to date row by row; then ``VACUUM ANALYZE``, so the planner,
the admin's estimated counts and index-only scans know the table, as autovacuum would
after a while. Last, the hourly and daily summaries the dashboard reads are rebuilt from
all the rows (``mcp_rebuild_log_summaries``: the fill bypasses the recorder that writes
them). Never point it at a database whose log you care about: it migrates the database it
is given, rebuilds its indexes and replaces its summaries.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 1_000_000

FILL = """
INSERT INTO {table} (
    started_at, site, method, target, request_id, declared_revision, served_revision,
    served_how, client_name, client_version, user_id, username, outcome, error_code,
    http_status, duration_ms, params, error_message, permission_denied, remote_addr,
    user_agent
)
SELECT
    now() - %s * interval '1 second' + (i - %s) * %s * interval '1 second'
        - random() * interval '5 seconds',
    'mcp',
    (ARRAY['tools/call','tools/call','tools/call','tools/call','tools/list',
           'resources/read','prompts/get','resources/list','server/discover',
           'completion/complete'])[1 + (i %% 10)],
    CASE WHEN i %% 10 IN (0, 1, 2, 3) THEN 'tool_' || (i %% 200)
         WHEN i %% 10 = 5 THEN 'books://' || (i %% 5000)
         WHEN i %% 10 = 6 THEN 'prompt_' || (i %% 30)
         ELSE '' END,
    (i %% 1000)::text,
    '2026-07-28', '2026-07-28',
    CASE WHEN i %% 97 = 0 THEN '' WHEN i %% 1009 = 0 THEN 'best-effort' ELSE 'supported' END,
    (ARRAY['claude-desktop','cursor','inspector','vscode','zed','goose','cline',
           'windsurf','continue','custom-agent'])[1 + (i %% 10)] || '-' || (i %% 7),
    '1.' || (i %% 20),
    NULL, '',
    CASE WHEN i %% 97 = 0 THEN 'protocol_error' WHEN i %% 31 = 0 THEN 'tool_error'
         ELSE 'ok' END,
    CASE WHEN i %% 97 = 0 THEN -32602 ELSE NULL END,
    CASE WHEN i %% 97 = 0 THEN 400 ELSE 200 END,
    random() * 50,
    NULL,
    CASE WHEN i %% 97 = 0 THEN 'Unknown tool: tool_' || (i %% 200) ELSE '' END,
    i %% 9973 = 0,
    ('198.51.100.' || (i %% 250))::inet,
    'bench-agent/1.0'
FROM generate_series(%s, %s) AS i
ORDER BY i
"""

#: The table's indexes but its primary key, as ``CREATE INDEX`` statements.
INDEXES = """
SELECT indexname, indexdef FROM pg_indexes
WHERE schemaname = current_schema() AND tablename = %s
  AND indexname NOT IN (
      SELECT conname FROM pg_constraint WHERE conrelid = to_regclass(%s) AND contype = 'p'
  )
ORDER BY indexname
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=90, help="the span the rows cover")
    parser.add_argument("--drop", action="store_true", help="drop the django_mcp tables")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings")
    os.environ.setdefault("DJANGO_MCP_INSECURE", "1")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from django_mcp.requestlog.models import RequestLog

    if connection.vendor != "postgresql":
        print("PostgreSQL only: set DJANGO_MCP_DB=postgres (and PGDATABASE).")
        return 2
    table = connection.ops.quote_name(RequestLog._meta.db_table)
    if args.drop:
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {table}")
        call_command("migrate", "django_mcp", "zero", verbosity=0)
        print(f"dropped the django_mcp tables of {connection.settings_dict['NAME']}")
        return 0
    call_command("migrate", verbosity=0)
    started = time.perf_counter()

    def progress(what: str) -> None:
        print(f"  {what:<40} {time.perf_counter() - started:7.1f} s", flush=True)

    span = args.days * 86400
    step = span / max(args.rows, 1)
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit = off")
        cursor.execute("SET maintenance_work_mem = '256MB'")
        cursor.execute(INDEXES, [RequestLog._meta.db_table, table])
        indexes = cursor.fetchall()
        for name, _ in indexes:
            cursor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")
        cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}")
        first = int(cursor.fetchone()[0]) + 1
        for low in range(first, first + args.rows, CHUNK):
            high = min(low + CHUNK, first + args.rows) - 1
            cursor.execute(FILL.format(table=table), [span, first, step, low, high])
            progress(f"{high - first + 1:,} rows")
        for name, definition in indexes:
            cursor.execute(definition)
            progress(f"index {name}")
    with connection.cursor() as cursor:  # VACUUM runs outside a transaction (autocommit)
        cursor.execute(f"VACUUM ANALYZE {table}")
    progress("vacuum analyze")
    from django_mcp.requestlog import summaries

    hours, days = summaries.rebuild(None, connection.alias)
    progress(f"summaries: {hours:,} hours, {days:,} days")
    print(f"filled {args.rows:,} rows in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
