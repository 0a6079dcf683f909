"""A request answered as a stream (progress notifications before its reply) is recorded
with the reply it ended with and its whole duration, not as "ok" when the stream opened.

basic/patterns/progress.mdx: notifications come before the response on the request's SSE
stream; basic/patterns/cancellation.mdx: a client that closes the stream cancels the
request. Under ASGI the handler is still running when the stream starts, so the row waits
for the stream's end; under WSGI the notifications are collected and the reply is known
before the stream is sent.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import async_to_sync
from django.core.asgi import get_asgi_application
from django.test import AsyncClient

from django_mcp import Context, ToolError
from django_mcp.exceptions import RequestCancelled
from django_mcp.http.native import NativeMCP
from django_mcp.protocol.errors import InvalidParams
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.test import AsyncMCPClient, MCPClientError
from tests.helpers import mcp_body, mcp_headers, mcp_post, request_meta
from tests.http.test_client_gone import LOGGED_SETTINGS, WAIT, http_head, rows_for, scope
from tests.live import APPLICATION, NATIVE_APPLICATION, live_server, migrate

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.django_db(transaction=True)

PAUSE = 0.3  # seconds a tool works after its first notification


def row(target: str, *, within: float = 5.0) -> dict[str, Any]:
    """The one row for ``target`` (polled, bounded: a stream that ended on another thread
    is recorded from there)."""
    deadline = time.monotonic() + within
    while True:
        recorder.flush()
        found = list(
            RequestLog.objects.filter(target=target).values(
                "outcome", "error_code", "http_status", "duration_ms", "error_message"
            )
        )
        if found or time.monotonic() > deadline:
            break
        gc.collect()  # a dropped response's finalizer ends its stream
        time.sleep(0.05)
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def streaming_tools(mcp_site: Any) -> Any:
    @mcp_site.tool
    def fails_late(ctx: Context) -> str:
        ctx.report_progress(1, total=2)
        time.sleep(PAUSE)
        raise ToolError("gave up half way")

    @mcp_site.tool
    def refuses_late(ctx: Context) -> str:
        ctx.report_progress(1, total=2)
        raise InvalidParams("not with these arguments")

    return mcp_site


def test_an_asgi_stream_is_recorded_with_the_reply_it_ended_with(streaming_tools: Any):
    """The tool error sent at the end of the stream is the row's outcome, and the
    duration covers the stream, not its first notification."""

    async def scenario() -> Any:
        return await AsyncMCPClient(site=streaming_tools).call_tool(
            "fails_late", meta={"progressToken": 1}
        )

    result = async_to_sync(scenario)()
    assert result.is_error
    assert [n["method"] for n in result.notifications] == ["notifications/progress"]
    logged = row("fails_late")
    assert (logged["outcome"], logged["http_status"]) == ("tool_error", 200)
    assert logged["duration_ms"] >= PAUSE * 1000


def test_an_asgi_stream_ending_in_a_protocol_error_records_its_code(streaming_tools: Any):
    async def scenario() -> int:
        try:
            await AsyncMCPClient(site=streaming_tools).call_tool(
                "refuses_late", meta={"progressToken": 1}
            )
        except MCPClientError as exc:
            return exc.code
        raise AssertionError("no error")

    assert async_to_sync(scenario)() == -32602
    logged = row("refuses_late")
    assert (logged["outcome"], logged["error_code"]) == ("protocol_error", -32602)
    assert logged["error_message"] == "not with these arguments"


def test_a_wsgi_stream_is_recorded_with_its_reply(client: Any, streaming_tools: Any):
    """Under WSGI the notifications are sent before the reply on one stream, the reply
    already known: the row has it."""
    response = mcp_post(
        client,
        "tools/call",
        {"name": "fails_late", "arguments": {}},
        meta=request_meta(progressToken=1),
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert response["Content-Type"] == "text/event-stream"
    b"".join(response.streaming_content)
    logged = row("fails_late")
    assert (logged["outcome"], logged["http_status"]) == ("tool_error", 200)


@pytest.fixture
def ticking(mcp_site: Any) -> dict[str, Any]:
    """A tool reporting progress 30 times, 50 ms apart; ``cancelled`` is set if it was."""
    seen: dict[str, Any] = {"cancelled": threading.Event(), "done": threading.Event()}

    @mcp_site.tool
    def ticks(ctx: Context) -> str:
        try:
            for step in range(30):
                ctx.report_progress(step, total=30)
                time.sleep(0.05)
        except RequestCancelled:
            seen["cancelled"].set()
            raise
        finally:
            seen["done"].set()
        return "all ticks"

    return seen


def ticks_message() -> dict[str, Any]:
    return mcp_body(
        "tools/call", {"name": "ticks", "arguments": {}}, meta=request_meta(progressToken=1)
    )


def test_a_stream_whose_response_is_dropped_unread_is_recorded_and_cancelled(
    ticking: dict[str, Any],
):
    """Nobody iterates the stream (a test that never reads the body, a middleware that
    replaced the response): when the response is freed the handler is cancelled and the
    request recorded as a client gone, from the thread that ends such streams (the
    response's finalizer may run inside a garbage collection, on any thread)."""
    body = ticks_message()

    async def post() -> None:
        response = await AsyncClient().post(
            "/mcp", json.dumps(body), content_type="application/json", headers=mcp_headers(body)
        )
        assert response["Content-Type"] == "text/event-stream"

    async_to_sync(post)()
    gc.collect()
    assert ticking["done"].wait(5)
    assert ticking["cancelled"].is_set()
    assert row("ticks")["http_status"] == 499


def test_a_response_freed_by_a_collection_under_the_logs_lock_does_not_deadlock(
    ticking: dict[str, Any],
):
    """A dropped response may be freed by a garbage collection that an allocation set off
    on any thread, the request log's writer included while it holds its (non-reentrant)
    lock. The finalizer only queues the stream; recording it there would deadlock."""
    body = ticks_message()

    async def post() -> None:
        await AsyncClient().post(
            "/mcp", json.dumps(body), content_type="application/json", headers=mcp_headers(body)
        )

    async_to_sync(post)()
    assert ticking["done"].wait(5)

    def collect_holding_the_lock() -> None:
        with recorder._state.lock:
            gc.collect()

    collector = threading.Thread(target=collect_holding_the_lock, daemon=True)
    collector.start()
    collector.join(5)
    assert not collector.is_alive(), "deadlocked on the request log's lock"
    assert row("ticks")["http_status"] == 499


class LeavesAtOnce:
    """An ASGI client that sends its request, then disconnects before any answer."""

    def __init__(self, body: bytes) -> None:
        self.messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive(self) -> dict[str, Any]:
        if self.messages:
            return self.messages.pop(0)
        await asyncio.sleep(0.1)
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        pass


def test_a_client_gone_before_the_first_notification_leaves_nothing_behind(mcp_site: Any):
    """The client leaves while the view waits for the first notification: the request is
    recorded once (499, by the middleware), and the stream the view built anyway is ended
    and freed with its request, whether or not any other stream ever ran in this process
    (the thread that ends dropped streams starts with the first stream, not its record)."""
    finished = threading.Event()
    requests: list[weakref.ref[Any]] = []

    @mcp_site.tool
    def late(ctx: Context) -> str:
        requests.append(weakref.ref(ctx.request))
        time.sleep(0.5)
        try:
            ctx.report_progress(1, total=1)
        finally:
            finished.set()
        return "late"

    body = mcp_body(
        "tools/call", {"name": "late", "arguments": {}}, meta=request_meta(progressToken=1)
    )
    raw = json.dumps(body).encode()
    client = LeavesAtOnce(raw)

    async def serve() -> None:
        await get_asgi_application()(scope(raw, body), client.receive, client.send)

    async_to_sync(serve)()
    assert finished.wait(5)
    deadline = time.monotonic() + 5
    while requests[0]() is not None and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.05)
    assert requests[0]() is None, "the request is still held"
    assert row("late")["http_status"] == 499


class StopsReading:
    """An ASGI client that stops reading after the first notification (its socket full:
    ``send`` blocks), then disconnects."""

    def __init__(self, body: bytes) -> None:
        self.messages = [{"type": "http.request", "body": body, "more_body": False}]
        self.bodies = 0
        self.gone = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self.messages:
            return self.messages.pop(0)
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            self.bodies += 1
            if self.bodies >= 2:
                self.gone.set()
                await asyncio.Event().wait()  # blocked until cancelled


@pytest.mark.parametrize("native", [False, True], ids=["django", "native"])
def test_a_client_gone_while_the_server_waits_to_send_is_recorded_and_cancelled(
    ticking: dict[str, Any], native: bool
):
    """The server's ``send`` blocks, then the client leaves: the stream is closed without
    being resumed, and its end is still recorded (499) and cancels the handler."""
    body = ticks_message()
    raw = json.dumps(body).encode()
    client = StopsReading(raw)
    app = NativeMCP(get_asgi_application()) if native else get_asgi_application()

    async def serve() -> None:
        await app(scope(raw, body), client.receive, client.send)

    async_to_sync(serve)()
    gc.collect()
    assert ticking["done"].wait(5)
    assert ticking["cancelled"].is_set()
    assert row("ticks")["http_status"] == 499


def test_a_stream_closed_once_its_reply_is_out_is_recorded_with_the_reply(mcp_site: Any):
    """A consumer that stops as soon as it holds the reply did get its answer: 200, not a
    client gone."""

    @mcp_site.tool
    def quick(ctx: Context) -> str:
        ctx.report_progress(1, total=1)
        time.sleep(0.1)
        return "done"

    body = mcp_body(
        "tools/call", {"name": "quick", "arguments": {}}, meta=request_meta(progressToken=1)
    )

    async def read_to_the_reply() -> None:
        response = await AsyncClient().post(
            "/mcp", json.dumps(body), content_type="application/json", headers=mcp_headers(body)
        )
        events = response.streaming_content
        seen = b""
        async for chunk in events:
            seen += chunk
            if b'"result"' in seen:
                break
        await events.aclose()

    async_to_sync(read_to_the_reply)()
    logged = row("quick")
    assert (logged["http_status"], logged["outcome"]) == (200, "ok")


@pytest.mark.live
@pytest.mark.parametrize(
    ("kind", "application"),
    [("uvicorn", APPLICATION), ("uvicorn", NATIVE_APPLICATION), ("daphne", APPLICATION)],
)
def test_a_client_that_closes_a_stream_is_recorded_as_gone(
    tmp_path: Path, kind: str, application: str
) -> None:
    """basic/patterns/cancellation.mdx: closing the stream cancels the request. The row is
    written when the stream ends, as a client gone (499), not "ok" at its start."""
    database = tmp_path / "db.sqlite3"
    env = {"DJANGO_MCP_SQLITE": str(database), "DJANGO_MCP_DB": "sqlite"}
    migrate(LOGGED_SETTINGS, env)
    message = mcp_body(
        "tools/call",
        {"name": "slow_compute", "arguments": {"seconds": 5}},
        meta=request_meta(progressToken="p"),
    )
    body = json.dumps(message).encode()
    head = http_head(message, len(body))
    with live_server(
        LOGGED_SETTINGS, tmp_path, kind=kind, application=application, env=env
    ) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(head + body)
            received = b""
            while b"notifications/progress" not in received:  # until the stream started
                chunk = sock.recv(65536)
                assert chunk, received
                received += chunk
        assert rows_for(database, "slow_compute") == [(499, None)]
        assert server.is_running()
