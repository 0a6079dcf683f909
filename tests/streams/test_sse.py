"""SSE framing and the ``Accept`` negotiation of response streams (pure protocol code).

basic/transports/streamable-http.mdx: one JSON-RPC message per SSE event, no
``id:`` lines (streams are not resumable), comment lines as keep-alives; the client's
``Accept`` lists ``text/event-stream`` when it can read a stream.
"""

from __future__ import annotations

import pytest

from django_mcp.protocol import sse


def test_an_event_is_one_data_line_of_compact_json_and_a_blank_line():
    """basic/transports/streamable-http.mdx: one message per event, no ``id:`` line."""
    frame = sse.event({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"a": 1}})

    assert (
        frame == b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"a":1}}\n\n'
    )


def test_a_keep_alive_is_an_sse_comment():
    """basic/transports/streamable-http.mdx: keep-alives are comment lines (``:``)."""
    assert sse.KEEP_ALIVE.startswith(b":")
    assert sse.KEEP_ALIVE.endswith(b"\n\n")


@pytest.mark.parametrize(
    ("accept", "streams"),
    [
        ("application/json, text/event-stream", True),
        ("TEXT/EVENT-STREAM", True),
        ("text/*", True),
        ("*/*", True),
        ("application/json", False),
        ("", False),
        (None, False),
        ("text/event-stream;q=0", False),
        ("application/json, text/event-stream; q=0.0", False),
        ("text/event-stream;q=0, */*", False),
        ("*/*;q=0, text/event-stream", True),
        ("text/event-stream;q=0.5", True),
    ],
)
def test_accept_decides_whether_a_response_may_stream(accept: str | None, streams: bool):
    """basic/transports/streamable-http.mdx: the server streams only to a client that
    accepts ``text/event-stream``; the most specific matching range decides and ``q=0``
    refuses it (RFC 9110)."""
    assert sse.accepts_event_stream(accept) is streams
