#!/usr/bin/env bash
# Run the official MCP conformance suite (revision 2026-07-28) against the testproject.
#
#   .ci/conformance.sh [RESULTS_DIR]
#
# Runs the suite three times against the testproject, with a fresh SQLite database (migrated
# first) and a task worker (`manage.py db_worker`) beside the server, on 127.0.0.1 and a free
# port:
#   1. its ASGI app under daphne, as docs/deployment.md recommends running it
#      (`python -m django_mcp.http.daphne`: MCP request bodies bounded while they arrive);
#   2. its WSGI app under gunicorn, the documented WSGI settings (docs/deployment.md): one
#      threaded worker (gthread, GUNICORN_THREADS threads, idle connections kept 10 s: with
#      gunicorn's 2 s the suite's Node client, which reuses a connection for 4 s, loses a
#      request now and then, see "Idle client connections" there) that may hold
#      LISTEN_WSGI_STREAMS listen streams, while .ci/hold_listen.py holds HELD_STREAMS of
#      them open for the whole run. The suite's own listen scenarios use the rest: a stream
#      its client closes gives its thread back within a poll or two (django_mcp/http/peer.py).
#      The held streams connect from 127.0.0.2, another caller: the suite keeps its own
#      LISTEN_MAX_STREAMS_PER_CALLER (five), of which its Node client, which stops reading
#      some streams without closing them, leaves two open during server-stateless;
#   3. the same gunicorn run through the native WSGI path (testproject.wsgi_native:
#      NativeMCPWSGI serves the MCP POSTs without Django's handler).
# Each time it waits until the server answers server/discover, then runs
#
#   conformance server --url http://localhost:PORT/mcp --requirements 2026-07-28 \
#       --expected-failures EMPTY_BASELINE -o RESULTS_DIR[/gunicorn|/gunicorn-native]
#
# Every required scenario must pass: the expected-failures list is empty (and its file is
# gone), but an empty baseline is still given to the suite, because with a baseline a
# WARNING fails the run as well as a FAILURE. The server is always stopped. The script
# prints the suite's summary plus the count of required scenarios that passed, and exits
# with the suite's exit code (the worst of the three runs): 0 when no required check fails or
# warns, 1 otherwise. Other codes mean the harness itself could not run.
#
# Environment:
#   PYTHON           the interpreter with Django and daphne (default: .venv/bin/python)
#   CONFORMANCE_DIR  where the pinned suite lives; installed there by
#                    .ci/conformance-install.sh when missing (default: .ci/.tools/conformance)
#   READY_TIMEOUT    seconds to wait for the server to answer (default: 30)
#   GUNICORN_THREADS, LISTEN_WSGI_STREAMS, HELD_STREAMS  the gunicorn run (default: 16, 8, 2)
#
# RESULTS_DIR (default: a new temporary directory) receives one checks.json per scenario,
# plus server.log and suite.log; RESULTS_DIR/gunicorn the same for the gunicorn run, plus
# holder.log; RESULTS_DIR/gunicorn-native the same for the native WSGI run.
set -euo pipefail

cd "$(dirname "$0")/.."
repo="$(pwd)"

PYTHON="${PYTHON:-$repo/.venv/bin/python}"
CONFORMANCE_DIR="${CONFORMANCE_DIR:-$repo/.ci/.tools/conformance}"
READY_TIMEOUT="${READY_TIMEOUT:-30}"
GUNICORN_THREADS="${GUNICORN_THREADS:-16}"
LISTEN_WSGI_STREAMS="${LISTEN_WSGI_STREAMS:-8}"
HELD_STREAMS="${HELD_STREAMS:-2}"

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
holder_pid=""

stop_holder() {
    if [ -n "$holder_pid" ]; then
        kill "$holder_pid" 2>/dev/null || true
        wait "$holder_pid" 2>/dev/null || true
    fi
    holder_pid=""
}
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
}
cleanup() {
    if [ -n "$suite_pid" ]; then
        kill "$suite_pid" 2>/dev/null || true
        wait "$suite_pid" 2>/dev/null || true
    fi
    stop_holder
    stop_server
    rm -rf "$workdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
export DJANGO_SETTINGS_MODULE=testproject.settings
export DJANGO_MCP_INSECURE=1  # a loopback server: the demo SECRET_KEY and DEBUG are fine
export DJANGO_MCP_SQLITE="$workdir/db.sqlite3"

"$PYTHON" manage.py migrate --noinput >"$results/migrate.log" 2>&1 \
    || { cat "$results/migrate.log" >&2; die "migrate failed"; }

# run_suite NAME OUT SERVER-COMMAND...: start the server on $port, wait until it answers,
# optionally hold listen streams (NAME gunicorn*), run the suite into OUT, stop everything.
# Sets run_status to the suite's exit status.
run_suite() {
    local name="$1" out="$2"
    shift 2
    mkdir -p "$out"
    "$@" >"$out/server.log" 2>&1 &
    server_pid=$!
    # MCP tasks run in a Django Tasks worker; a short interval picks new jobs up promptly.
    "$PYTHON" manage.py db_worker --interval 0.1 --no-startup-delay --no-reload \
        >"$out/worker.log" 2>&1 &
    worker_pid=$!

    # Ready when server/discover answers 200; poll every 0.1 s for at most READY_TIMEOUT s.
    local discover='{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
    local ready="" status deadline=$((SECONDS + READY_TIMEOUT))
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
        cat "$out/server.log" >&2
        if kill -0 "$server_pid" 2>/dev/null; then
            die "$name did not answer server/discover at $url within ${READY_TIMEOUT}s"
        fi
        die "$name exited before answering (its log is above)"
    fi
    echo "conformance: testproject serving $url ($name pid $server_pid); results in $out"

    if [[ "$name" == gunicorn* ]]; then
        "$PYTHON" "$repo/.ci/hold_listen.py" "$url" "$HELD_STREAMS" >"$out/holder.log" 2>&1 &
        holder_pid=$!
        # The holder prints its line once every stream is acknowledged (it gives up in 15 s).
        for _ in $(seq 200); do
            grep -q "^holding" "$out/holder.log" 2>/dev/null && break
            kill -0 "$holder_pid" 2>/dev/null || break
            sleep 0.1
        done
        grep -q "^holding" "$out/holder.log" || { cat "$out/holder.log" >&2; die "could not hold listen streams"; }
        echo "conformance: $(cat "$out/holder.log") during the $name run"
    fi

    # In the background and waited for, so that a signal stops the run at once.
    "$conformance" server --url "$url" --requirements 2026-07-28 \
        --expected-failures "$BASELINE" -o "$out" >"$out/suite.log" 2>&1 &
    suite_pid=$!
    run_status=0
    wait "$suite_pid" || run_status=$?
    suite_pid=""

    if [ -n "$holder_pid" ] && ! kill -0 "$holder_pid" 2>/dev/null; then
        cat "$out/holder.log" >&2
        echo "conformance: the held listen streams did not stay open" >&2
        run_status=1
    fi
    stop_holder
    stop_server
    # A refused listen stream (per-caller or per-process limit) shows only as a missing
    # notification in the suite's report: say so here, where the cause can be read.
    local refused
    refused="$(grep -c "Too Many Requests\|Service Unavailable" "$out/server.log" || true)"
    [ "$refused" = "0" ] || echo "conformance: $name refused $refused request(s) with 429/503" \
        "(listen limits or rate limits; see $out/server.log)"
    local pending_status=0
    summarize "$out/suite.log" || pending_status=$?
    echo "conformance: $name: suite exit status $run_status, pending $pending_status" \
        "(checks.json per scenario in $out)"
    [ "$run_status" -ne 0 ] || run_status=$pending_status
}

# summarize SUITE_LOG: the suite's summary plus the count of required scenarios that passed;
# fails when a pending (not scored) scenario failed, which the suite does not baseline.
summarize() {
    # The suite's summary (from "=== SUMMARY ===" on), without colour codes.
    sed -e 's/\x1b\[[0-9;]*m//g' "$1" | sed -n '/=== SUMMARY ===/,$p'
    # The required scenarios are the `server:` list of the suite's frozen requirements file.
    requirements="$CONFORMANCE_DIR/node_modules/@modelcontextprotocol/conformance/requirements/2026-07-28.yaml"
    "$PYTHON" - "$1" "$requirements" <<'EOF'
import json
import os
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

# Every check that failed or warned, with its message, from the checks.json of each scenario
# this run saved (named in its log, so a reused results directory's older runs are not
# read): the summary only counts them, and CI's output is all a failed run leaves behind.
for folder in re.findall(r"^Results saved to (.+)$", text, re.M):
    scenario = os.path.basename(folder.strip())
    try:
        with open(os.path.join(folder.strip(), "checks.json"), encoding="utf-8") as file:
            checks = json.load(file)
    except (OSError, ValueError) as exc:
        print(f"check not passed: {scenario}: its checks.json is unreadable ({exc})")
        continue
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict) and check.get("status") in ("FAILURE", "WARNING"):
            print(
                f"check not passed: {scenario} {check.get('id')}: {check.get('status')}:",
                check.get("errorMessage") or "(no message)",
            )
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
}

free_port() {  # a free loopback port (released just before the server binds it)
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

port="$(free_port)"
url="http://localhost:$port/mcp"
run_suite daphne "$results" "$PYTHON" -m django_mcp.http.daphne -b 127.0.0.1 -p "$port" \
    testproject.asgi:application
daphne_status=$run_status

port="$(free_port)"
url="http://localhost:$port/mcp"
export DJANGO_MCP_LISTEN_WSGI_STREAMS="$LISTEN_WSGI_STREAMS"
run_suite gunicorn "$results/gunicorn" \
    "$PYTHON" -m gunicorn --bind "127.0.0.1:$port" --workers 1 --worker-class gthread \
    --threads "$GUNICORN_THREADS" --graceful-timeout 2 --keep-alive 10 testproject.wsgi:application
gunicorn_status=$run_status

port="$(free_port)"
url="http://localhost:$port/mcp"
run_suite gunicorn-native "$results/gunicorn-native" \
    "$PYTHON" -m gunicorn --bind "127.0.0.1:$port" --workers 1 --worker-class gthread \
    --threads "$GUNICORN_THREADS" --graceful-timeout 2 --keep-alive 10 \
    testproject.wsgi_native:application
native_status=$run_status

suite_status=$((daphne_status > gunicorn_status ? daphne_status : gunicorn_status))
suite_status=$((suite_status > native_status ? suite_status : native_status))
echo "conformance: daphne $daphne_status, gunicorn $gunicorn_status," \
    "gunicorn native $native_status; exit status $suite_status"
exit "$suite_status"
