"""``manage.py mcp_stdio``: the stdio transport (basic/transports/stdio.mdx), driven as a
subprocess, by the official ``mcp`` SDK's stdio client and by raw lines; and, at the end,
``StdioServer`` driven in-process where a test needs the test database.

Each process serves ``tests.stdio.settings`` on a migrated SQLite file of its own.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone
from mcp import Client, StdioServerParameters

from django_mcp import Context
from django_mcp.server.dispatch import MCPServer
from django_mcp.stdio import transport
from django_mcp.stdio.transport import StdioServer
from django_mcp.tasks.models import MCPTask
from tests.helpers import mcp_body, request_meta
from tests.live import REPO
from tests.stdio.support import DEADLINE, META, Process, command, environment_with_ada, request
from tests.tasks.support import declaring

if TYPE_CHECKING:
    from collections.abc import Iterator

PG_ADMIN = {"host": "127.0.0.1", "dbname": "postgres", "user": os.environ.get("PGUSER", "postgres")}


def run_sdk(env: dict[str, str], body: Any, *args: str) -> Any:
    parameters = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp_stdio", *args], env=env, cwd=str(REPO)
    )

    async def main() -> Any:
        with anyio.fail_after(DEADLINE):
            client_info = types.Implementation(name="stdio-test", version="1.0")
            async with Client(parameters, mode="auto", client_info=client_info) as client:
                return await body(client)

    return anyio.run(main)


def test_the_sdk_discovers_lists_and_calls_tools_with_progress(stdio_env):
    """basic/transports/stdio.mdx, with the official SDK's stdio client: it probes
    ``server/discover`` (a modern server), lists tools and calls one whose
    ``notifications/progress`` lines reach its progress callback before the result
    (basic/patterns/progress.mdx)."""
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async def body(client: Client) -> tuple[list[str], Any, Any]:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        progress = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )
        failing = await client.call_tool("test_error_handling", {})
        return tools, progress, failing

    tools, progress, failing = run_sdk(stdio_env, body)

    assert {"search_books", "wait_for_cancel", "caller"} <= set(tools)
    assert progress.is_error is False
    assert seen == [0, 50, 100]
    assert failing.is_error is True


def test_the_user_comes_from_the_option_or_the_environment(stdio_env):
    """basic/authorization.mdx: a stdio server takes credentials from its environment;
    ``--user`` names the user too, and without either the caller is anonymous."""

    async def body(client: Client) -> str:
        result = await client.call_tool("caller", {})
        return result.content[0].text

    assert run_sdk(stdio_env, body, "--user", "ada") == "ada"
    assert run_sdk({**stdio_env, "DJANGO_MCP_USER": "ada"}, body) == "ada"
    assert run_sdk(stdio_env, body) == "anonymous"


def test_an_unknown_user_stops_the_command_before_serving(stdio_env):
    """A user that does not exist is an error, never a silent anonymous session."""
    result = subprocess.run(
        command("--user", "nobody"),
        env=stdio_env,
        cwd=REPO,
        input=b"",
        capture_output=True,
        timeout=DEADLINE,
        check=False,
    )
    assert result.returncode != 0
    assert result.stdout == b""
    assert b"No active user is named 'nobody'" in result.stderr


def test_malformed_lines_get_error_lines_and_notifications_get_none(start):
    """basic/transports/stdio.mdx and the JSON-RPC rules: a line that is not JSON gets a
    -32700 error without an id; a notification is never answered (even an unknown one);
    a request without ``_meta`` gets -32602 with its id; nothing but JSON reaches stdout,
    even when a tool prints."""
    process = start()
    process.send(b"{not json")
    process.send({"jsonrpc": "2.0", "method": "notifications/unknown"})
    process.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}})
    process.send(request(8, "tools/call", {"name": "noisy", "arguments": {}}))
    process.send(request(9, "initialize"))
    lines, stderr = process.finish()

    by_id = {line.get("id"): line for line in lines}
    assert len(lines) == 4
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[7]["error"]["code"] == -32602
    assert by_id[8]["result"]["content"][0]["text"] == "quiet"
    assert by_id[9]["error"]["code"] == -32601
    assert "noise from a tool" in stderr


def test_a_child_process_cannot_write_to_the_protocol_stream(start):
    """basic/transports/stdio.mdx: "The server MUST NOT write anything to its stdout that is
    not a valid MCP message." Rebinding ``sys.stdout`` left file descriptor 1 the protocol
    pipe, and a child process a tool starts (or C code) wrote straight into it; fd 1 is
    now stderr while the command serves, and protocol lines have a descriptor of their
    own."""
    process = start()
    process.send(request(1, "tools/call", {"name": "shell_out", "arguments": {}}))
    lines, stderr = process.finish()  # fails on a line of stdout that is not JSON

    assert [line["id"] for line in lines] == [1]
    assert lines[0]["result"]["content"][0]["text"] == "done"
    assert "noise from a child process" in stderr


@pytest.mark.parametrize("tool", ["exits", "checked_by_exit"])
def test_sys_exit_in_a_tool_or_its_permission_check_is_answered_and_the_process_serves_on(
    start, tool
):
    """basic/index.mdx: every request gets a response, with the request's id; over stdio
    nothing else (no connection to drop) tells the client its request ended.

    ``exits``: a tool that calls ``sys.exit()`` (a wrapped command-line ``main``, say)
    raises ``SystemExit``, no ``Exception``: the worker thread swallowed it and wrote
    nothing, not even to stderr, and the client waited for ever.
    ``checked_by_exit``: a custom permission check runs as the line is admitted, on the
    thread that reads stdin, where only ``Exception`` was caught: one that calls
    ``sys.exit()`` ended the whole process (the request unanswered, every later one
    unread). Both are now logged and answered -32603, as any handler that raises is, and
    the next request is served."""
    process = start()
    process.send(request(1, "tools/call", {"name": tool, "arguments": {}}))
    process.send(request(2, "server/discover"))
    lines, stderr = process.finish()

    by_id = {line["id"]: line for line in lines}
    assert sorted(by_id) == [1, 2]
    assert by_id[1]["error"]["code"] == -32603
    assert "result" in by_id[2]
    assert "SystemExit" in stderr


def test_a_cancelled_request_stops_and_gets_no_response(start):
    """basic/patterns/cancellation.mdx: on stdio the client cancels with
    ``notifications/cancelled {requestId}``; the server stops the request and sends
    nothing more for it, while it goes on answering other requests."""
    process = start()
    lines = process.lines()
    process.send(
        request(
            1,
            "tools/call",
            {"name": "wait_for_cancel", "arguments": {}, "_meta": {**META, "progressToken": "w"}},
        )
    )
    first = next(lines)
    assert first["method"] == "notifications/progress"  # the tool is running
    process.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "user pressed stop"},
        }
    )
    process.send(request(2, "server/discover"))
    answered = next(lines)
    rest, _ = process.finish()

    assert answered["id"] == 2
    assert "result" in answered
    assert [line for line in rest if line.get("id") == 1] == []


def test_a_cancellation_naming_no_request_id_is_ignored(start):
    """basic/patterns/cancellation.mdx: ``requestId`` names a request (a string or an
    integer). One that is a list or an object used to kill the process (it does not hash);
    now such a notification is ignored, and the server goes on answering."""
    process = start()
    for odd in ([1], {"a": 1}, None):
        process.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": odd}}
        )
    process.send(request(2, "server/discover"))
    lines, _ = process.finish()

    assert [line["id"] for line in lines] == [2]
    assert "result" in lines[0]


def test_listen_streams_lines_until_cancelled(start):
    """basic/patterns/subscriptions.mdx over stdio: the acknowledgement comes as a line;
    ``notifications/cancelled`` for the listen id ends the stream, and the process ends
    cleanly when its input closes."""
    process = start()
    lines = process.lines()
    process.send(request(5, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
    ack = next(lines)
    process.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
    )
    rest, _ = process.finish()

    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert rest == []


def test_listen_streams_never_take_the_workers_from_requests(start):
    """A hostile probe found 8 open streams left no worker for ``tools/list`` (it waited
    for ``LISTEN_MAX_SECONDS``). Streams run on threads of their own, at most
    ``LISTEN_MAX_STREAMS_PER_CALLER`` (5) at once, as for one HTTP caller; one more is
    refused with the same error (-31000, ``data.limit``), and requests are still answered."""
    process = start()
    lines = process.lines()
    listen = {"notifications": {"toolsListChanged": True}}
    for stream in range(1, 9):
        process.send(request(stream, "subscriptions/listen", listen))
    process.send(request(99, "server/discover"))
    seen = [next(lines) for _ in range(9)]  # 5 acknowledgements, 3 refusals, 1 answer
    for stream in range(1, 9):
        process.send(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": stream}}
        )
    process.finish()

    acknowledged = [
        m for m in seen if m.get("method") == "notifications/subscriptions/acknowledged"
    ]
    refused = [m for m in seen if "error" in m]
    assert len(acknowledged) == 5
    assert [m["error"]["code"] for m in refused] == [-31000] * 3
    assert refused[0]["error"]["data"] == {"limit": "caller"}
    assert any(m.get("id") == 99 and "result" in m for m in seen)


def test_a_line_over_the_size_limit_is_refused_unread_and_the_next_is_served(start):
    """basic/transports/stdio.mdx frames one message per line; as the HTTP transport
    refuses a body over ``MAX_REQUEST_BYTES`` (4 MiB here) before reading it, a longer
    line gets -32600 with the id its beginning shows (on stdio nothing else matches an
    answer to its request), its rest is dropped up to the newline, and the next line is
    served. Before, the whole line was read into memory and answered as a normal
    request."""
    process = start()
    huge = "x" * (4 * 1024 * 1024)
    process.send(request(1, "tools/call", {"name": "noisy", "arguments": {"pad": huge}}))
    process.send(request(2, "server/discover"))
    lines, _ = process.finish()

    assert len(lines) == 2
    refused, answered = lines
    assert refused["id"] == 1  # read from the line's beginning: stdio has no other way
    assert refused["error"]["code"] == -32600
    assert refused["error"]["message"] == "Request body is too large"
    assert answered["id"] == 2
    assert "result" in answered


@pytest.mark.django_db(transaction=True)
def test_a_listen_stream_acts_for_the_processs_user(mcp_site, django_user_model, settings):
    """tasks.md, "Task Status Notifications": a listen stream's ``taskIds``
    keep the caller's own tasks. Over stdio the caller is ``--user``; the stream used to be
    opened without the process's request, so it acted for nobody and dropped them."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_KEEPALIVE_SECONDS": 0.05}

    @mcp_site.tool(task="required")
    def job() -> str:
        return "done"

    ada = django_user_model.objects.create_user("ada")
    now = timezone.now()
    task = MCPTask.objects.create(
        site=mcp_site.name, owner=f"user:{ada.pk}", tool="job", created_at=now, last_updated_at=now
    )
    server = MCPServer(mcp_site)
    output = io.BytesIO()
    stdio = StdioServer(server, output, user=ada)
    params = {"notifications": {"taskIds": [task.pk]}}
    body = json.dumps(mcp_body("subscriptions/listen", params, id=5, meta=declaring()))
    admitted = server.admit(body.encode(), None, request=stdio.request)

    call = stdio.inflight.admit(5)  # in flight, as StdioServer.start makes it
    assert call is not None
    call.stream = threading.Event()
    worker = threading.Thread(target=stdio._stream, args=(admitted, None, call))
    worker.start()
    deadline = time.monotonic() + DEADLINE
    while not output.getvalue() and time.monotonic() < deadline:
        time.sleep(0.02)
    stdio._closing.set()
    worker.join(DEADLINE)

    ack = json.loads(output.getvalue().splitlines()[0])
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"].get("taskIds") == [task.pk]


def serve_in_process(stdio: StdioServer, *messages: dict[str, Any]) -> dict[Any, Any]:
    """Serve ``messages`` as lines; the answers written, by id."""
    stdio.serve([json.dumps(message).encode() + b"\n" for message in messages])
    assert isinstance(stdio.output, io.BytesIO)
    return {m.get("id"): m for m in map(json.loads, stdio.output.getvalue().splitlines())}


@pytest.mark.django_db(transaction=True)
def test_a_permission_check_that_raises_fails_its_request_and_the_server_goes_on(mcp_site, caplog):
    """basic/transports/stdio.mdx: the server reads messages until its input ends. A
    request whose permission check raises (a bug, a missing related row) used to end the
    process and leave every later line unanswered; it gets -32603 with its id, as a
    handler that raises does, the error is logged, and the next line is answered."""

    def broken_check(ctx: Context) -> bool:
        raise KeyError("profile")

    @mcp_site.tool(permission=broken_check)
    def gated() -> str:
        return "x"

    stdio = StdioServer(MCPServer(mcp_site), io.BytesIO(), user=AnonymousUser())
    with caplog.at_level("ERROR", logger="django_mcp"):
        answers = serve_in_process(
            stdio,
            mcp_body("tools/call", {"name": "gated", "arguments": {}}, id=1),
            mcp_body("server/discover", {}, id=2),
        )

    assert answers[1]["error"] == {"code": -32603, "message": "Internal error"}
    assert "result" in answers[2]
    assert "KeyError: 'profile'" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_notification_whose_admission_raises_is_never_answered(mcp_site, monkeypatch):
    """A notification never gets a response, not even when its admission fails."""
    server = MCPServer(mcp_site)

    def broken_admit(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("profile")

    monkeypatch.setattr(server, "admit", broken_admit)
    stdio = StdioServer(server, io.BytesIO(), user=AnonymousUser())
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}

    assert serve_in_process(stdio, notification) == {}


@pytest.fixture
def pg_env() -> Iterator[tuple[dict[str, str], str]]:
    """The environment of an ``mcp_stdio`` process on a PostgreSQL database made for this
    test (its name), dropped afterwards; skipped when no PostgreSQL is at 127.0.0.1."""
    psycopg = pytest.importorskip("psycopg")
    name = f"django_mcp_stdio_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(autocommit=True, **PG_ADMIN) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError:
        pytest.skip("no PostgreSQL at 127.0.0.1")
    try:
        extra = {"PGDATABASE": name, "DJANGO_MCP_SQLITE": "unused"}
        yield environment_with_ada("tests.stdio.settings_pg", extra), name
    finally:
        with psycopg.connect(autocommit=True, **PG_ADMIN) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def terminate_backends(database: str) -> int:
    """Close every connection to ``database``, as a database restart (or an idle-session
    timeout) does; how many there were."""
    import psycopg

    with psycopg.connect(autocommit=True, **PG_ADMIN) as admin:
        query = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"
        return len(admin.execute(query, (database,)).fetchall())


def test_after_the_database_drops_its_connections_the_process_recovers(pg_env):
    """The main thread admits every line, and permission checks query the database there.
    It used to keep the connection it opened for the life of the process: once the database
    dropped it, every later admission that queried failed with -32603, for ever. It now
    recycles a broken connection before each admission (``close_old_connections``, as
    Django does at each HTTP request's start): the first call after the drop may fail, as
    one HTTP request might; the next ones are answered."""
    env, database = pg_env
    process = Process(env, "--user", "ada")
    try:
        lines = process.lines()
        call = {"name": "active_only", "arguments": {}}
        process.send(request(1, "tools/call", call))
        assert next(lines)["result"]["content"][0]["text"] == "welcome"

        assert terminate_backends(database) >= 1
        answers = []
        for request_id in (2, 3, 4):
            process.send(request(request_id, "tools/call", call))
            answers.append(next(lines))
    finally:
        process.kill()

    assert "result" in answers[-1], json.dumps(answers)
    assert answers[-1]["result"]["content"][0]["text"] == "welcome"


# -- cancellation of a queued request, and the end of listen streams at shutdown -------------


@pytest.mark.django_db(transaction=True)
def test_a_request_cancelled_while_it_waits_for_a_worker_never_runs(mcp_site: Any) -> None:
    """basic/patterns/cancellation.mdx: the receiver SHOULD stop processing a cancelled
    request. Request 2 waits for the only worker; its cancellation was ignored as unknown
    (only running requests were known), so once the worker was free the tool ran in full
    and was answered. It is now taken out of the queue: it never runs, and, as any
    cancelled request, gets no response."""
    release, started = threading.Event(), threading.Event()
    ran: list[str] = []

    @mcp_site.tool
    def hold() -> str:
        started.set()
        release.wait(10)
        return "held"

    @mcp_site.tool
    def delete_everything() -> str:
        ran.append("deleted")
        return "deleted"

    output = io.BytesIO()
    stdio = StdioServer(MCPServer(mcp_site), output, user=AnonymousUser(), max_workers=1)

    def lines() -> Iterator[bytes]:
        yield json.dumps(mcp_body("tools/call", {"name": "hold", "arguments": {}}, id=1)).encode()
        assert started.wait(10)
        call = mcp_body("tools/call", {"name": "delete_everything", "arguments": {}}, id=2)
        yield json.dumps(call).encode()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        yield json.dumps(cancel).encode()
        release.set()

    stdio.serve(lines())

    answered = [json.loads(line).get("id") for line in output.getvalue().splitlines()]
    assert ran == []
    assert answered == [1]


LISTEN = {"notifications": {"toolsListChanged": True}}


def test_an_open_listen_stream_ends_with_its_result_when_the_input_ends(start: Any) -> None:
    """basic/transports/stdio.mdx, "Shutdown": the client closes stdin and waits for the
    server to exit. basic/patterns/subscriptions.mdx: a server that ends a subscription
    SHOULD first send the listen request's result. The stream used to stop writing at the
    end of the input: the subscription was never answered."""
    process = start()
    lines = process.lines()
    process.send(request(5, "subscriptions/listen", LISTEN))
    ack = next(lines)
    process.close_input()
    rest = list(lines)
    assert process.popen.wait(timeout=DEADLINE) == 0

    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert [message.get("id") for message in rest] == [5]
    assert rest[0]["result"]["resultType"] == "complete"


def test_a_listen_request_just_before_the_input_ends_is_acknowledged_and_answered(
    start: Any,
) -> None:
    """A listen line followed at once by the end of input got nothing at all, while a
    ``tools/call`` sent the same way is run and answered: it gets its acknowledgement
    (which MUST come first) and its result."""
    process = start()
    process.send(request(5, "subscriptions/listen", LISTEN))
    lines, _ = process.finish()

    assert lines[0]["method"] == "notifications/subscriptions/acknowledged"
    assert [message.get("id") for message in lines[1:]] == [5]


def test_sigterm_ends_the_input_as_closing_stdin_does(start: Any) -> None:
    """basic/transports/stdio.mdx, "Shutdown": a server that does not exit once stdin is
    closed gets SIGTERM. The process died with its subscription unanswered (the listen
    shutdown handler is only installed from the main thread, and stdio streams run on
    others); SIGTERM now ends the input: the stream ends with its result, exit status 0."""
    import signal

    process = start()
    lines = process.lines()
    process.send(request(5, "subscriptions/listen", LISTEN))
    assert next(lines)["method"] == "notifications/subscriptions/acknowledged"
    process.popen.send_signal(signal.SIGTERM)
    rest = list(lines)

    assert process.popen.wait(timeout=DEADLINE) == 0
    assert [message.get("id") for message in rest] == [5]


@pytest.mark.django_db(transaction=True)
def test_a_late_cancellation_does_not_cancel_the_next_request_with_that_id(
    mcp_site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """basic/patterns/cancellation.mdx: a cancellation may arrive after its request
    ended, and the receiver ignores it. One that came after the reply but before the
    request was quite done was kept for the id, and cancelled the next request that
    reused the id (legal once the first ended): that one was never answered."""
    """Request 1 is answered; its worker is still in ``run``'s ``finally`` (closing its
    database connections) when the client's late ``notifications/cancelled`` for 1
    arrives. ``cancel`` finds no Context and a Future it cannot cancel, so it parks id 1
    in ``_cancel_on_start``, which nothing clears any more. The client then reuses id 1
    (legal once 1 finished): that request is cancelled as it starts and never answered."""

    @mcp_site.tool
    def echo(text: str) -> str:
        return text

    release = threading.Event()
    real_close_all = transport.connections.close_all
    calls: list[int] = []

    def slow_close_all() -> None:  # widens the window between the reply and `forget`
        calls.append(1)
        if len(calls) == 1:
            release.wait(10)
        real_close_all()

    monkeypatch.setattr(transport.connections, "close_all", slow_close_all)
    output = io.BytesIO()
    stdio = StdioServer(MCPServer(mcp_site), output, user=AnonymousUser(), max_workers=1)

    def wait_for(condition: Any) -> None:
        deadline = time.monotonic() + 10
        while not condition():
            assert time.monotonic() < deadline
            time.sleep(0.01)

    def lines() -> Any:
        first = mcp_body("tools/call", {"name": "echo", "arguments": {"text": "a"}}, id=1)
        yield json.dumps(first).encode()
        wait_for(lambda: b'"id":1' in output.getvalue())  # answered
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        yield json.dumps(cancel).encode()  # the race the spec allows: it came too late
        release.set()
        wait_for(lambda: 1 not in stdio.inflight)  # request 1 is completely finished
        second = mcp_body("tools/call", {"name": "echo", "arguments": {"text": "b"}}, id=1)
        yield json.dumps(second).encode()

    stdio.serve(lines())

    answers = [json.loads(line) for line in output.getvalue().splitlines()]
    texts = [a["result"]["content"][0]["text"] for a in answers if "result" in a]
    assert texts == ["a", "b"], answers


class ClosedByTheClient(io.BytesIO):
    """stdout whose reading end the client closed (by default: every write is a broken
    pipe), or that fails otherwise."""

    def __init__(self, error: OSError | None = None) -> None:
        super().__init__()
        self.error = error or BrokenPipeError(32, "Broken pipe")

    def write(self, data: Any) -> int:
        raise self.error


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "error",
    [
        BrokenPipeError(32, "Broken pipe"),
        BlockingIOError(11, "Resource temporarily unavailable"),  # made non-blocking
        OSError(5, "Input/output error"),
    ],
    ids=["broken-pipe", "non-blocking", "io-error"],
)
def test_once_the_client_closes_stdout_nothing_more_runs(mcp_site: Any, error: OSError) -> None:
    """basic/transports/stdio.mdx: the client reads the server's stdout; once it closed
    it, no answer can reach it. The server ran every request on (their answers went
    nowhere) and died at its next write from the main thread with a traceback. Now the
    first broken write cancels what runs and the server stops reading; so does any other
    failed write (a client that made the pipe non-blocking, an I/O error), after which
    the stream is no longer whole."""
    started, cancelled = threading.Event(), threading.Event()
    ran: list[str] = []

    @mcp_site.tool
    def hang(ctx: Context) -> str:
        ctx.on_cancel(cancelled.set)
        started.set()
        cancelled.wait(5)
        return "hung"

    @mcp_site.tool
    def fast() -> str:
        return "fast"

    @mcp_site.tool
    def later() -> str:
        ran.append("later")
        return "later"

    stdio = StdioServer(MCPServer(mcp_site), ClosedByTheClient(error), user=AnonymousUser())

    def lines() -> Iterator[bytes]:
        yield json.dumps(mcp_body("tools/call", {"name": "hang", "arguments": {}}, id=1)).encode()
        assert started.wait(10)
        yield json.dumps(mcp_body("tools/call", {"name": "fast", "arguments": {}}, id=2)).encode()
        deadline = time.monotonic() + 10
        while not stdio._output_gone:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        yield json.dumps(mcp_body("tools/call", {"name": "later", "arguments": {}}, id=3)).encode()

    stdio.serve(lines())

    assert cancelled.is_set()
    assert ran == []


def test_the_command_exits_0_without_a_traceback_once_the_client_closed_stdout(start):
    """basic/transports/stdio.mdx: the client reads the server's stdout, and may close it
    and stdin to shut the server down ("Shutdown"). Once a write has failed, the server
    stops (above), and docs/guides/stdio.md promises exit status 0; but the answer that
    could not be written stayed in the protocol stream's buffer, and the command flushed
    it again on its way out: ``BrokenPipeError``, a traceback on stderr and status 1."""
    process = start()
    assert process.popen.stdout is not None
    process.popen.stdout.close()  # the client will read nothing more
    process.send(request(1, "server/discover"))
    process.close_input()
    returncode = process.popen.wait(timeout=DEADLINE)
    assert process.popen.stderr is not None
    stderr = process.popen.stderr.read().decode()

    assert "stdout was closed by the client" in stderr  # the write did fail
    assert "Traceback" not in stderr
    assert returncode == 0


@pytest.mark.django_db(transaction=True)
def test_a_listen_cancelled_before_its_stream_opens_writes_nothing(
    mcp_site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """basic/patterns/cancellation.mdx (and basic/transports/streamable-http.mdx,
    "Cancellation"): once a request is cancelled the server MUST NOT send any further
    messages for it. A stream was known to cancellations only once its thread had opened
    it: a ``notifications/cancelled`` read meanwhile (a client that opens a subscription
    and closes it at once) was ignored, and the stream was acknowledged and kept its slot
    until the input ended, then answered. It is now known as soon as it is read."""
    server = MCPServer(mcp_site)
    cancel_read = threading.Event()
    real_open_listen = server.open_listen

    def open_listen_after_the_cancellation(*args: Any, **kwargs: Any) -> Any:
        assert cancel_read.wait(10)
        return real_open_listen(*args, **kwargs)

    monkeypatch.setattr(server, "open_listen", open_listen_after_the_cancellation)
    output = io.BytesIO()
    stdio = StdioServer(server, output, user=AnonymousUser())

    def lines() -> Iterator[bytes]:
        yield json.dumps(mcp_body("subscriptions/listen", LISTEN, id=5)).encode()
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}
        yield json.dumps(cancel).encode()
        cancel_read.set()  # the cancellation was handled: now the stream opens

    stdio.serve(lines())

    assert output.getvalue() == b""
    assert len(stdio.inflight) == 0


def test_sigterm_after_the_input_ended_lets_running_requests_finish(start: Any) -> None:
    """basic/transports/stdio.mdx, "Shutdown": the client closes stdin, waits for the
    server to exit, and sends SIGTERM if it has not. A SIGTERM in that wait (the server
    still finishing a request) broke it off: the request was never answered, and the
    process exited 0 under the tool still running. The input has already ended: SIGTERM
    lets the request finish and be answered, as one before the end of input does (a
    second SIGTERM still stops the process)."""
    import signal

    process = start()
    lines = process.lines()
    call = {"name": "slow_noisy", "arguments": {"seconds": 1.5}}
    process.send(request(1, "tools/call", {**call, "_meta": {**META, "progressToken": "p"}}))
    assert next(lines)["method"] == "notifications/progress"  # the tool runs
    process.close_input()
    time.sleep(0.3)  # the server has read the end of its input and waits for the tool
    process.popen.send_signal(signal.SIGTERM)
    rest, stderr = process.finish()  # fails on a line of stdout that is not JSON

    assert [message.get("id") for message in rest] == [1]
    assert rest[0]["result"]["content"][0]["text"] == "slow and quiet"
    assert "noise from a slow tool" in stderr


def test_a_child_process_cannot_read_the_protocol_stream(start: Any) -> None:
    """basic/transports/stdio.mdx: the server reads the client's messages from its stdin.
    File descriptor 0 was the protocol pipe while the command served, so a child process
    a tool starts without a stdin of its own inherited it: one that reads it (``cat``,
    ``sort``, ``ssh``, ``ffmpeg``...) waited for the client's next lines and took them,
    messages the server never saw. fd 0 now reads as empty while the command serves, as
    fd 1 writes to stderr; the protocol reads a descriptor of its own."""
    process = start()
    lines = process.lines()
    process.send(request(1, "tools/call", {"name": "shell_out_reading_stdin", "arguments": {}}))
    answer = next(lines)
    process.send(request(2, "server/discover"))
    rest, _ = process.finish()

    assert answer["id"] == 1
    assert answer["result"]["content"][0]["text"] == "the child read 0 bytes"
    assert [message.get("id") for message in rest] == [2]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "declared",
    ["\uff12\uff10\uff12\uff17-01-01", "\u0662\u0660\u0662\u0667-\u0660\u0661-\u0660\u0661"],
)
def test_a_version_in_other_scripts_digits_is_no_dated_revision(mcp_site, declared):
    """basic/versioning.mdx: a revision is a ``YYYY-MM-DD`` string; docs/adr/0001: a string
    that is not one gets -32022 whatever the policy. Fullwidth or Arabic-Indic digits read
    as 2027-01-01 by ``int`` must not be served best-effort as a newer revision (and
    recorded as one): stdio has no ``MCP-Protocol-Version`` header to refuse them first."""
    stdio = StdioServer(MCPServer(mcp_site), io.BytesIO(), user=AnonymousUser())
    meta = request_meta(version=declared)
    answers = serve_in_process(stdio, mcp_body("server/discover", {}, id=1, meta=meta))

    assert answers[1]["error"]["code"] == -32022
    assert answers[1]["error"]["data"] == {"supported": ["2026-07-28"], "requested": declared}
