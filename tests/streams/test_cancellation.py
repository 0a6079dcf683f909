"""Closing a response stream cancels the request, through live Daphne and uvicorn servers.

basic/patterns/cancellation.mdx and basic/transports/streamable-http.mdx, "Cancellation":
"Closing the SSE response stream MUST be treated by the server as cancellation of that
request. [...] The server SHOULD stop work on the cancelled request as soon as practical and
MUST NOT send any further messages for it."

The tools (tests/streams/tools_site.py) record each step in a file the test names, so the
test sees from outside whether the handler stopped: ``cancelled`` must appear, ``finished``
never, and the file must stop growing.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import httpx
import pytest

from . import remote

if TYPE_CHECKING:
    from pathlib import Path

    from tests.live import LiveServer

pytestmark = pytest.mark.live

STOP_WITHIN = 5.0  # seconds the handler has to notice the disconnect
QUIET_FOR = 0.5  # seconds the record must then stay unchanged


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def wait_for_line(path: Path, line: str, within: float = STOP_WITHIN) -> list[str]:
    """Poll ``path`` (bounded) until it holds ``line``; return its lines."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        seen = lines(path)
        if line in seen:
            return seen
        time.sleep(0.02)
    raise AssertionError(f"{line!r} not recorded within {within} s: {lines(path)[-5:]}")


def assert_stays(path: Path, expected: list[str], duration: float = QUIET_FOR) -> None:
    """The record does not change for ``duration`` (the handler has really stopped)."""
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        assert lines(path) == expected, "the handler kept working after it was cancelled"
        time.sleep(0.05)


def disconnect_after_first_progress(server: LiveServer, tool: str, record: Path) -> None:
    body = remote.tool_call(tool, {"path": str(record)}, progressToken="cancel-me")
    with remote.stream(server.url("/streams/mcp"), body) as (response, reader):
        assert response.headers["content-type"] == "text/event-stream"
        first = reader.message()
        assert first["method"] == "notifications/progress"
    # Leaving the block closed the connection: the disconnect is the cancellation.


def test_closing_the_stream_stops_a_sync_handler_at_its_next_progress_report(
    live: LiveServer, tmp_path: Path
):
    """basic/patterns/cancellation.mdx: a sync handler cannot be interrupted, so it stops at
    its next ``ctx.report_progress`` (``RequestCancelled``) and reports nothing more."""
    record = tmp_path / "sync.txt"

    disconnect_after_first_progress(live, "count_slowly", record)

    seen = wait_for_line(record, "cancelled")
    assert seen[-1] == "cancelled"
    assert "finished" not in seen
    assert sum(line.startswith("step ") for line in seen) < 400
    assert_stays(record, seen)


def test_closing_the_stream_cancels_an_async_handler_while_it_awaits(
    live: LiveServer, tmp_path: Path
):
    """basic/patterns/cancellation.mdx: the server SHOULD stop work soon; an async handler's
    task is cancelled where it awaits (it would otherwise wait 10 s)."""
    record = tmp_path / "async.txt"

    disconnect_after_first_progress(live, "wait_async", record)

    seen = wait_for_line(record, "cancelled")
    assert seen == ["started", "cancelled"]
    assert_stays(record, seen)


def test_a_client_gone_before_the_first_notification_cancels_the_handler_too(
    live: LiveServer, tmp_path: Path
):
    """basic/patterns/cancellation.mdx: "The server MUST treat a disconnect as
    cancellation", also when the client leaves before the stream has started (here it gives
    up after 0.1 s without response headers; the handler reports its first progress at
    0.5 s and is stopped at its next report)."""
    record = tmp_path / "late.txt"
    body = remote.tool_call("late_progress", {"path": str(record)}, progressToken="late")

    with pytest.raises(httpx.ReadTimeout):
        remote.post(live.url("/streams/mcp"), body, timeout=httpx.Timeout(5.0, read=0.1))

    seen = wait_for_line(record, "cancelled")
    assert "finished" not in seen
    assert sum(line.startswith("step ") for line in seen) <= 1
    assert_stays(record, seen)


def test_the_server_keeps_serving_after_a_cancelled_request(live: LiveServer, tmp_path: Path):
    """basic/patterns/cancellation.mdx: "A broken stream loses the in-flight request. The
    client re-issues it with a new id" - and the server answers it as usual."""
    record = tmp_path / "again.txt"
    disconnect_after_first_progress(live, "count_slowly", record)
    wait_for_line(record, "cancelled")

    result = remote.result(
        live.url("/streams/mcp"),
        remote.tool_call("count_slowly", {"path": str(record), "steps": 2, "pause": 0}, id=2),
    )

    assert result["content"][0]["text"] == "counted"
    assert lines(record)[-1] == "finished"
