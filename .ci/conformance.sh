#!/usr/bin/env bash
# Run the official MCP conformance suite (revision 2026-07-28) against the testproject.
#
#   .ci/conformance.sh [RESULTS_DIR]
#
# Starts the testproject's ASGI app under daphne on 127.0.0.1 and a free port, with a fresh
# SQLite database (migrated first) and a task worker (`manage.py db_worker`) beside it,
# waits until it answers server/discover, then runs
#
#   conformance server --url http://localhost:PORT/mcp --requirements 2026-07-28 \
#       --expected-failures EMPTY_BASELINE -o RESULTS_DIR
#
# which runs the 37 scored scenarios and the 13 pending ones the revision lists (the Tasks
# extension, JSON Schema 2020-12, the HTTP header scenarios). The suite compares only the
# scored ones with the baseline, so this script fails the run itself when a pending one fails (tasks-status-notifications is a placeholder that always reports SKIPPED).
#
# Every required scenario must pass: the expected-failures list is empty (and its file is
# gone), but an empty baseline is still given to the suite, because with a baseline a
# WARNING fails the run as well as a FAILURE. The server is always stopped. The script
# prints the suite's summary plus the count of required scenarios that passed, and exits
# with the suite's exit code: 0 when no required check fails or warns, 1 otherwise. Other
# codes mean the harness itself could not run.
#
# Environment:
#   PYTHON           the interpreter with Django and daphne (default: .venv/bin/python)
#   CONFORMANCE_DIR  where the pinned suite lives; installed there by
#                    .ci/conformance-install.sh when missing (default: .ci/.tools/conformance)
#   READY_TIMEOUT    seconds to wait for the server to answer (default: 30)
#
# RESULTS_DIR (default: a new temporary directory) receives one checks.json per scenario,
# plus server.log and suite.log.
set -euo pipefail

cd "$(dirname "$0")/.."
repo="$(pwd)"

PYTHON="${PYTHON:-$repo/.venv/bin/python}"
CONFORMANCE_DIR="${CONFORMANCE_DIR:-$repo/.ci/.tools/conformance}"
READY_TIMEOUT="${READY_TIMEOUT:-30}"

die() {
    echo "conformance: $*" >&2
    exit 2
}

[ -x "$PYTHON" ] || die "no Python at $PYTHON (set PYTHON)"
command -v curl >/dev/null 2>&1 || die "curl is required (readiness probe)"

results="${1:-$(mktemp -d "${TMPDIR:-/tmp}/django-mcp-conformance.XXXXXX")}"
mkdir -p "$results"
results="$(cd "$results" && pwd)"

"$repo/.ci/conformance-install.sh" "$CONFORMANCE_DIR" || die "could not install the suite"
conformance="$CONFORMANCE_DIR/conformance"

workdir="$(mktemp -d "${TMPDIR:-/tmp}/django-mcp-conformance-db.XXXXXX")"
BASELINE="$workdir/no-expected-failures.yml"
printf 'server: []\n' >"$BASELINE"
server_pid=""
worker_pid=""
suite_pid=""

stop_worker() {
    if [ -n "$worker_pid" ] && kill -0 "$worker_pid" 2>/dev/null; then
        kill "$worker_pid" 2>/dev/null || true
        wait "$worker_pid" 2>/dev/null || true
    fi
    worker_pid=""
}
stop_server() {
    stop_worker
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
    rm -rf "$workdir"
}
cleanup() {
    if [ -n "$suite_pid" ]; then
        kill "$suite_pid" 2>/dev/null || true
        wait "$suite_pid" 2>/dev/null || true
    fi
    stop_server
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
export DJANGO_SETTINGS_MODULE=testproject.settings
export DJANGO_MCP_SQLITE="$workdir/db.sqlite3"

"$PYTHON" manage.py migrate --noinput >"$results/migrate.log" 2>&1 \
    || { cat "$results/migrate.log" >&2; die "migrate failed"; }

# A free loopback port (released just before daphne binds it).
port="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
url="http://localhost:$port/mcp"

"$PYTHON" -m daphne -b 127.0.0.1 -p "$port" testproject.asgi:application \
    >"$results/server.log" 2>&1 &
server_pid=$!
# MCP tasks run in a Django Tasks worker; a short interval picks new jobs up promptly.
"$PYTHON" manage.py db_worker --interval 0.1 --no-startup-delay --no-reload \
    >"$results/worker.log" 2>&1 &
worker_pid=$!

# Ready when server/discover answers 200; poll every 0.1 s for at most READY_TIMEOUT s.
discover='{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
ready=""
deadline=$((SECONDS + READY_TIMEOUT))
while [ "$SECONDS" -lt "$deadline" ]; do
    kill -0 "$server_pid" 2>/dev/null || break
    status="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X POST "http://127.0.0.1:$port/mcp" \
        -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
        -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \
        --data "$discover" || true)"
    if [ "$status" = "200" ]; then
        ready=1
        break
    fi
    sleep 0.1
done
if [ -z "$ready" ]; then
    cat "$results/server.log" >&2
    if kill -0 "$server_pid" 2>/dev/null; then
        die "the server did not answer server/discover at $url within ${READY_TIMEOUT}s"
    fi
    die "the server exited before answering (its log is above)"
fi
echo "conformance: testproject serving $url (daphne pid $server_pid); results in $results"

# In the background and waited for, so that a signal stops the run at once.
"$conformance" server --url "$url" --requirements 2026-07-28 \
    --expected-failures "$BASELINE" -o "$results" >"$results/suite.log" 2>&1 &
suite_pid=$!
suite_status=0
wait "$suite_pid" || suite_status=$?
suite_pid=""

stop_server

# The suite's summary (from "=== SUMMARY ===" on), without colour codes.
sed -e 's/\x1b\[[0-9;]*m//g' "$results/suite.log" | sed -n '/=== SUMMARY ===/,$p'
# The required scenarios are the `server:` list of the suite's frozen requirements file.
requirements="$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/requirements/2026-07-28.yaml"
pending_status=0
"$PYTHON" - "$results/suite.log" "$requirements" <<'EOF' || pending_status=$?
import re
import sys

required, in_server = [], False
with open(sys.argv[2], encoding="utf-8") as lines:
    for line in lines:
        if re.match(r"\S", line):
            in_server = line.startswith("server:")
        elif in_server and (item := re.match(r"\s+-\s+(\S+)", line)):
            required.append(item.group(1))
with open(sys.argv[1], encoding="utf-8") as log:
    text = re.sub(r"\x1b\[[0-9;]*m", "", log.read())
rows = {
    name: (mark == "✓", int(ok), int(bad))
    for mark, name, ok, bad in re.findall(
        r"^\s*([✓✗])\s+(\S+): (\d+) passed, (\d+) failed", text, re.M
    )
}
scored = [rows[name] for name in required if name in rows]
print(
    f"Required scenarios passed: {sum(ok for ok, _, _ in scored)}/{len(required)}; "
    f"their checks: {sum(n for _, n, _ in scored)} passed, {sum(n for _, _, n in scored)} failed"
)
others = {name: ok for name, (ok, _, _) in rows.items() if name not in required}
print(f"Pending (not scored) scenarios passed: {sum(others.values())}/{len(others)}")
failed = sorted(name for name, ok in others.items() if not ok)
if failed:
    print("Pending scenarios failed: " + ", ".join(failed))
missing = [name for name in required if name not in rows]
if missing:
    print("Required scenarios missing from the run: " + ", ".join(missing))
# The suite compares only scored scenarios with the baseline: a pending one fails here.
sys.exit(1 if failed else 0)
EOF
echo "conformance: suite exit status $suite_status, pending $pending_status (checks.json per scenario in $results)"
[ "$suite_status" -eq 0 ] || exit "$suite_status"
exit "$pending_status"
