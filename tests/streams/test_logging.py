"""Log messages gated by the request's ``logLevel``, on the request's own response stream.

server/utilities/logging.mdx and changelog.mdx: "Log level is now set per-request via
``io.modelcontextprotocol/logLevel`` in ``_meta``"; the server may send
``notifications/message`` on the request's stream (basic/transports/streamable-http.mdx,
"Receiving Messages") when ``logLevel`` was set, at that level or above it, and never
otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers import assert_error, call_tool, request_meta, result_of

from . import remote, sse

if TYPE_CHECKING:
    from tests.live import LiveServer

pytestmark = pytest.mark.usefixtures("streams_urls")

LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def logged_levels(response: Any) -> list[str]:
    messages = sse.messages(b"".join(response.streaming_content))
    *notes, final = messages
    assert final["result"]["content"][0]["text"] == "logged"
    assert {note["method"] for note in notes} <= {"notifications/message"}
    for note in notes:
        assert note["params"]["logger"] == "streams"
        assert note["params"]["data"] == f"{note['params']['level']} message"
    return [note["params"]["level"] for note in notes]


@pytest.mark.parametrize("level", LEVELS)
def test_log_messages_are_sent_at_and_above_the_requested_level(client: Any, level: str):
    """server/utilities/logging.mdx: the client sets the minimum level per request; the
    server sends messages of that severity or higher, in order."""
    response = call_tool(
        client, "chatty", path="/streams/mcp", meta=request_meta(**{LOG_LEVEL: level})
    )

    assert response["Content-Type"] == "text/event-stream"
    assert logged_levels(response) == LEVELS[LEVELS.index(level) :]


def test_without_a_log_level_no_message_is_sent(client: Any):
    """server/utilities/logging.mdx and changelog.mdx: logging/setLevel is gone; without a
    ``logLevel`` on the request the server sends no ``notifications/message`` at all."""
    response = call_tool(client, "chatty", path="/streams/mcp")

    assert response["Content-Type"] == "application/json"
    assert result_of(response)["content"][0]["text"] == "logged"


@pytest.mark.parametrize("value", ["verbose", "INFO", 3, True, ""])
def test_an_invalid_log_level_is_invalid_params(client: Any, value: Any):
    """basic/index.mdx, "_meta": ``logLevel`` is a ``LoggingLevel``; a malformed request
    ``_meta`` is -32602 (HTTP 400)."""
    response = call_tool(
        client, "chatty", path="/streams/mcp", meta=request_meta(**{LOG_LEVEL: value})
    )

    assert_error(response, 400, -32602)


@pytest.mark.live
def test_log_messages_stream_live_beside_progress(daphne: LiveServer):
    """basic/transports/streamable-http.mdx: progress and log notifications that
    relate to the request may both precede its response on its stream."""
    body = remote.tool_call("chatty", id="log-1", **{LOG_LEVEL: "critical", "progressToken": "p"})

    with remote.stream(daphne.url("/streams/mcp"), body) as (response, reader):
        assert response.headers["content-type"] == "text/event-stream"
        messages = [frame.message for frame in reader.rest() if frame.message]

    for message in messages:
        sse.check_message(message, "tools/call")
    assert [m["params"]["level"] for m in messages[:-1]] == ["critical", "alert", "emergency"]
    assert messages[-1]["id"] == "log-1"


@pytest.mark.live
def test_a_log_level_on_a_tool_that_logs_nothing_gets_plain_json(daphne: LiveServer):
    """server/utilities/logging.mdx: log messages are optional; with nothing emitted before
    the response, the response is plain JSON."""
    body = remote.tool_call("test_simple_text", **{LOG_LEVEL: "debug"})

    response = remote.post(daphne.url(), body)

    assert response.headers["content-type"].startswith("application/json")


def test_ctx_log_refuses_a_level_mcp_does_not_define():
    """server/utilities/logging.mdx: levels are the RFC 5424 severities (debug ...
    emergency); a typo such as "warn" is a programming error, raised at once rather than
    silently dropped."""
    from django_mcp.protocol.meta import RequestMeta
    from django_mcp.protocol.revisions import RevisionDecision, ServedHow
    from django_mcp.server.context import Context
    from django_mcp.sites import MCPSite

    context = Context(
        site=MCPSite(name="log-level"),
        method="tools/call",
        request_id=1,
        meta=RequestMeta("2026-07-28", {}, log_level="debug"),
        revision=RevisionDecision("2026-07-28", "2026-07-28", ServedHow.SUPPORTED),
        emit=lambda note: None,
    )
    with pytest.raises(ValueError, match="warn"):
        context.log("warn", "typo")
