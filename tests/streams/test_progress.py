"""Progress notifications on a request's own SSE response stream, through live ASGI servers
(Daphne and uvicorn, with httpx streaming) and through the WSGI test client (buffered).

basic/patterns/progress.mdx: notifications go only while that request is in progress, and
over HTTP on that request's own SSE response stream, before the final response; ``progress``
must increase; the ``progressToken`` is a string or an integer.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers import call_tool, override_mcp, request_meta, result_of

from . import remote, sse

if TYPE_CHECKING:
    from tests.live import LiveServer

PROGRESS_TOOL = "test_tool_with_progress"  # testproject.conformance: progress 0, 50, 100 of 100


def assert_progress_stream(messages: list[dict[str, Any]], token: Any, request_id: Any) -> None:
    """Progress notifications carrying exactly ``token``, rising, then the response, last."""
    *notes, final = messages
    assert notes, "no progress notification before the response"
    for note in [*notes, final]:
        sse.check_message(note, "tools/call")
    assert {note["method"] for note in notes} == {"notifications/progress"}
    for note in notes:
        echoed = note["params"]["progressToken"]
        assert echoed == token
        assert type(echoed) is type(token)
    values = [note["params"]["progress"] for note in notes]
    assert values == sorted(set(values)), f"progress must increase: {values}"
    assert final["id"] == request_id
    assert final["result"]["content"][0]["text"] == str(token)


@pytest.mark.live
@pytest.mark.parametrize("token", ["tok-1", 7, 0], ids=["string", "integer", "zero"])
def test_progress_notifications_precede_the_response_on_an_event_stream(
    live: LiveServer, token: Any
):
    """basic/transports/streamable-http.mdx: the server may send notifications
    that relate to the request before its response; SSE responses SHOULD carry
    ``X-Accel-Buffering: no`` [and ``Cache-Control: no-cache``, rec]. basic/patterns/progress.mdx:
    the notification echoes the request's ``progressToken`` (string or integer) exactly."""
    body = remote.tool_call(PROGRESS_TOOL, id=11, progressToken=token)

    with remote.stream(live.url(), body) as (response, reader):
        assert response.status_code == 200
        assert response.headers["content-type"].split(";")[0] == "text/event-stream"
        assert response.headers["x-accel-buffering"] == "no"
        assert response.headers["cache-control"] == "no-cache"
        frames = reader.rest()

    assert not [frame for frame in frames if frame.is_comment]
    assert_progress_stream([frame.message for frame in frames if frame.message], token, 11)


@pytest.mark.live
def test_without_a_progress_token_the_answer_is_plain_json(live: LiveServer):
    """basic/patterns/progress.mdx, and our choice where the spec leaves it open: open an SSE
    response only when there is something to stream, i.e. a progressToken or logLevel;
    otherwise answer plain JSON."""
    result = remote.result(live.url(), remote.tool_call(PROGRESS_TOOL))

    assert result["content"][0]["text"] == "Progress complete"


@pytest.mark.live
def test_a_client_that_does_not_accept_event_streams_gets_plain_json(live: LiveServer):
    """basic/transports/streamable-http.mdx: the server chooses JSON or SSE per request; a
    client whose ``Accept`` omits ``text/event-stream`` cannot read a stream, so it gets the
    final response as JSON (the progress is dropped, the request still succeeds)."""
    body = remote.tool_call(PROGRESS_TOOL, progressToken="t")

    response = remote.post(live.url(), body, headers={"Accept": "application/json"})

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["content"][0]["text"] == "t"


@pytest.mark.live
def test_a_tool_that_reports_no_progress_answers_plain_json_even_with_a_token(daphne: LiveServer):
    """basic/patterns/progress.mdx: progress notifications are optional ("MAY"); when the
    response comes before any notification it goes out as plain JSON, with its HTTP status."""
    body = remote.tool_call("test_simple_text", progressToken="t")

    response = remote.post(daphne.url(), body)

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")


@pytest.mark.live
def test_slow_streams_do_not_hold_up_other_streams(live: LiveServer):
    """basic/patterns/progress.mdx: notifications go "while that request is in progress":
    a stream's progress must not wait for other requests' handlers. As many slow streams
    as the event loop's default executor has threads (each between two progress reports
    for 5 s) must not delay a quick request's notifications and response."""
    slow = min(32, (os.cpu_count() or 1) + 4)
    started = threading.Semaphore(0)
    errors: list[BaseException] = []

    def hold(token: int) -> None:
        try:
            body = remote.tool_call("pulse", {"seconds": 5.0}, progressToken=token)
            with remote.stream(live.url("/streams/mcp"), body) as (_, reader):
                reader.message()
                started.release()
                reader.rest()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            started.release()

    holders = [threading.Thread(target=hold, args=(i,), daemon=True) for i in range(slow)]
    for holder in holders:
        holder.start()
    try:
        for _ in holders:
            assert started.acquire(timeout=10), "the slow streams did not start"
        began = time.monotonic()
        body = remote.tool_call("pulse", {"seconds": 0.1}, progressToken="quick")
        with remote.stream(live.url("/streams/mcp"), body) as (_, reader):
            frames = reader.rest()
        took = time.monotonic() - began
    finally:
        for holder in holders:
            holder.join(timeout=10)

    assert not errors, errors
    assert [frame.message["params"]["progress"] for frame in frames[:-1]] == [1, 2]
    assert frames[-1].message["result"]["content"][0]["text"] == "pulsed"
    assert took < 2.5, f"the quick stream waited for the slow ones ({took:.2f} s)"


def test_the_wsgi_path_buffers_progress_into_one_event_stream(client: Any):
    """basic/patterns/progress.mdx and streamable-http.mdx: under WSGI the notifications cannot
    interleave with the running handler, so they are sent in order before the response on one
    SSE stream (the same messages a live server streams)."""
    response = call_tool(client, PROGRESS_TOOL, id=5, meta=request_meta(progressToken="w-1"))

    assert response["Content-Type"] == "text/event-stream"
    assert response["X-Accel-Buffering"] == "no"
    assert response["Cache-Control"] == "no-cache"
    assert_progress_stream(sse.messages(b"".join(response.streaming_content)), "w-1", 5)


def test_the_wsgi_path_answers_plain_json_without_a_token(client: Any):
    """basic/patterns/progress.mdx (our choice where the spec leaves it open): no
    progressToken, no stream."""
    result = result_of(call_tool(client, PROGRESS_TOOL))

    assert result["content"][0]["text"] == "Progress complete"


@pytest.mark.usefixtures("streams_urls")
def test_progress_that_does_not_rise_is_not_sent(client: Any):
    """basic/patterns/progress.mdx: "The progress value MUST increase with each notification";
    a value not above the last one is dropped, not sent (unpaced here: pacing is
    tests/streams/test_progress_pacing.py)."""
    with override_mcp(PROGRESS_INTERVAL=0):
        response = call_tool(
            client,
            "progress_values",
            {"values": [1, 1, 0.5, 2, 2, 3.5]},
            path="/streams/mcp",
            meta=request_meta(progressToken="p"),
        )

    notes = sse.messages(b"".join(response.streaming_content))[:-1]
    assert [note["params"]["progress"] for note in notes] == [1, 2, 3.5]


@pytest.mark.usefixtures("streams_urls")
def test_a_value_progress_cannot_carry_raises_in_the_tool_and_sends_nothing(client: Any):
    """basic/patterns/progress.mdx: ``progress`` and ``total`` are numbers, ``message`` a
    string, and progress MUST increase. NaN was sent as ``null`` and then let every later
    value through (nothing compares above or below it); infinity, a bool or a string went
    out as they were. Each now raises in the tool, which can catch it, and nothing of it is
    sent: the stream carries 1 and 2 only."""
    response = call_tool(
        client, "progress_mistakes", path="/streams/mcp", meta=request_meta(progressToken="m")
    )

    *notes, final = sse.messages(b"".join(response.streaming_content))
    assert [note["params"] for note in notes] == [
        {"progressToken": "m", "progress": 1},
        {"progressToken": "m", "progress": 2},
    ]
    refused = final["result"]["content"][0]["text"].splitlines()
    assert refused == [
        "report_progress: progress must be finite, not nan",
        "report_progress: progress must be finite, not inf",
        "report_progress: progress must be a number, not str",
        "report_progress: progress must be a number, not bool",
        "report_progress: total must be finite, not nan",
        "report_progress: message must be a string, not int",
    ]


def test_checked_progress_keeps_integers_and_writes_other_reals_as_floats():
    """A ``Fraction`` is a real number JSON cannot write; it goes out as a float."""
    from fractions import Fraction

    from django_mcp.server.context import checked_progress

    assert checked_progress(3, 10, "x") == (3, 10, "x")
    progress, total, _ = checked_progress(Fraction(1, 2), Fraction(3, 2))
    assert (progress, total) == (0.5, 1.5)
    assert (type(progress), type(total)) == (float, float)
    # An integer is finite however large: no OverflowError from math.isfinite.
    assert checked_progress(10**400) == (10**400, None, None)
