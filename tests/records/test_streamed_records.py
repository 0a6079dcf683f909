"""A request answered as a stream (progress notifications before its reply) is recorded
with the reply it ended with and its whole duration, not as "ok" when the stream opened.

basic/patterns/progress.mdx: notifications come before the response on the request's SSE
stream; basic/patterns/cancellation.mdx: a client that closes the stream cancels the
request. Under ASGI the handler is still running when the stream starts, so the row waits
for the stream's end; under WSGI the notifications are collected and the reply is known
before the stream is sent.
"""

from __future__ import annotations

import json
import socket
import time
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import async_to_sync

from django_mcp import Context, ToolError
from django_mcp.protocol.errors import InvalidParams
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.test import AsyncMCPClient, MCPClientError
from tests.helpers import mcp_body, mcp_post, request_meta
from tests.http.test_client_gone import LOGGED_SETTINGS, WAIT, http_head, rows_for
from tests.live import APPLICATION, NATIVE_APPLICATION, live_server, migrate

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.django_db(transaction=True)

PAUSE = 0.3  # seconds a tool works after its first notification


def row(target: str) -> dict[str, Any]:
    recorder.flush()
    (found,) = RequestLog.objects.filter(target=target).values(
        "outcome", "error_code", "http_status", "duration_ms", "error_message"
    )
    return found


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
