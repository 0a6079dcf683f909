"""Pacing of ``notifications/progress``: at most one per ``PROGRESS_INTERVAL``.

basic/patterns/progress.mdx, "Implementation Notes": "Both parties SHOULD implement rate
limiting to prevent flooding". A tool reporting from a tight loop sent one SSE event per
step; answered buffered (WSGI, or past ``MAX_LIVE_STREAMS``) every one of them waited in
memory until the reply. Now a report sooner than the interval after the last one sent is
held, the newest replacing the older, and sent with the next report after the interval or
just before the reply: the client always sees the first report and the last.
"""

from __future__ import annotations

import gc
import itertools
import json
import sys
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

import pytest

from django_mcp.conf import DEFAULTS
from django_mcp.protocol.meta import RequestMeta
from django_mcp.protocol.revisions import RevisionDecision, ServedHow
from django_mcp.server.context import Context
from django_mcp.server.dispatch import MCPServer
from django_mcp.server.progress import Pacer, progress_interval
from django_mcp.sites import MCPSite
from tests.helpers import call_tool, mcp_body, override_mcp, request_meta

from . import remote, sse

if TYPE_CHECKING:
    from tests.live import LiveServer

pytestmark = pytest.mark.usefixtures("streams_urls")


def reported(response: Any) -> list[dict[str, Any]]:
    """The params of each progress notification on a buffered (WSGI) answer, in order."""
    *notes, final = sse.messages(b"".join(response.streaming_content))
    assert "result" in final, final
    return [note["params"] for note in notes]


def call(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    return call_tool(
        client, tool, arguments, path="/streams/mcp", meta=request_meta(progressToken="p")
    )


def paced_context(emit: Any) -> Context:
    """A ``tools/call`` Context with a progress token whose notifications go to ``emit``."""
    meta = RequestMeta(protocol_version="2026-07-28", client_capabilities={}, progress_token=1)
    return Context(
        site=MCPSite(name="pacing"),
        method="tools/call",
        request_id=1,
        meta=meta,
        revision=RevisionDecision("2026-07-28", "2026-07-28", ServedHow.SUPPORTED),
        emit=emit,
        user=object(),
    )


def test_a_burst_of_reports_sends_the_first_and_the_newest_before_the_reply(client: Any):
    """basic/patterns/progress.mdx: senders SHOULD rate-limit. 2,000 reports in a tight
    loop were 2,000 events, all buffered until the reply; within one interval only the
    first goes at once, and the newest held (its message with it) just before the reply."""
    with override_mcp(PROGRESS_INTERVAL=60):
        params = reported(call(client, "progress_burst", {"count": 2000}))

    assert [(p["progress"], p["total"], p["message"]) for p in params] == [
        (1, 2000, "step 1"),
        (2000, 2000, "step 2000"),
    ]
    assert {p["progressToken"] for p in params} == {"p"}


def test_a_report_after_the_interval_goes_at_once(client: Any):
    """basic/patterns/progress.mdx: progress MUST increase, and pacing keeps it so. 2 comes
    after the interval and goes at once; 3 comes right after 2 and is held, then replaced
    by 4, which goes before the reply: 1, 2, 4."""
    arguments = {"values": [1, 2, 3, 4], "pauses": [0.3, 0, 0, 0]}
    with override_mcp(PROGRESS_INTERVAL=0.2):
        params = reported(call(client, "progress_with_pauses", arguments))

    assert [p["progress"] for p in params] == [1, 2, 4]


def test_an_interval_of_zero_sends_every_rising_report(client: Any):
    """basic/patterns/progress.mdx: rate limiting is a SHOULD; ``PROGRESS_INTERVAL`` 0
    turns it off, and every rising report is sent."""
    with override_mcp(PROGRESS_INTERVAL=0):
        params = reported(call(client, "progress_burst", {"count": 50}))

    assert [p["progress"] for p in params] == list(range(1, 51))


def test_the_default_interval_is_50_ms():
    """The documented default (docs/settings.md): 20 reports a second at most, enough
    for a progress bar, and what lets the conformance fixture's reports 50 ms apart
    through."""
    assert DEFAULTS["PROGRESS_INTERVAL"] == 0.05


def test_a_cancelled_request_sends_no_held_report():
    """basic/patterns/cancellation.mdx: once a request is cancelled the server MUST NOT
    send more messages for it; a report held by the pacer stays unsent."""
    sent: list[dict[str, Any]] = []
    context = paced_context(sent.append)
    with override_mcp(PROGRESS_INTERVAL=60):
        context.report_progress(1)
        context.report_progress(2)  # held
        context.cancel()
        context.end_progress()

    assert [note["params"]["progress"] for note in sent] == [1]


@pytest.mark.live
def test_a_burst_on_a_live_stream_is_paced_too(live: LiveServer):
    """basic/patterns/progress.mdx: senders SHOULD rate-limit, on a live ASGI stream as on
    a buffered answer: 2,000 reports in a tight loop reach the client as a few events (one
    per 50 ms the loop takes, at the default interval), the first and the last among them."""
    body = remote.tool_call("progress_burst", {"count": 2000}, progressToken="live")
    with remote.stream(live.url("/streams/mcp"), body) as (response, reader):
        assert response.headers["content-type"].split(";")[0] == "text/event-stream"
        frames = reader.rest()

    messages = [frame.message for frame in frames if frame.message]
    values = [message["params"]["progress"] for message in messages[:-1]]
    assert values[0] == 1
    assert values[-1] == 2000
    assert len(values) < 50, values
    assert messages[-1]["result"]["content"][0]["text"] == "reported"


@pytest.mark.parametrize("value", [-1, "fast", None, float("nan"), True])
def test_an_interval_the_checks_refuse_means_the_default(value: Any):
    """A process that never ran the checks (E004 refuses these) is paced at the default,
    never unpaced by accident."""
    with override_mcp(PROGRESS_INTERVAL=value):
        assert progress_interval() == DEFAULTS["PROGRESS_INTERVAL"]


class StuckSend:
    """A transport's send that records what went, and blocks on the item whose ``key`` is
    ``stuck`` (a full pipe, a write behind a row lock) until :attr:`release` is set;
    :attr:`in_send` says the send has begun."""

    def __init__(self, stuck: Any, key: Any = lambda item: item) -> None:
        self.stuck, self.key = stuck, key
        self.in_send, self.release = threading.Event(), threading.Event()
        self.sent: list[Any] = []

    def __call__(self, item: Any) -> None:
        if self.key(item) == self.stuck:
            self.in_send.set()
            self.release.wait(10)
        self.sent.append(self.key(item))


def wait_for(condition: Any, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_held_report_goes_once_its_interval_has_passed():
    """basic/patterns/progress.mdx: progress tells the client where the work is. A report
    held by the pacer waited for the next report or the reply, so ``report(0)``, then
    ``report(1)`` a moment later and an hour of work left the client on 0 for the hour;
    the shared flushing thread sends it once the interval has passed."""
    sent: list[int] = []
    pacer = Pacer(sent.append, interval=0.1)
    pacer.offer(0)
    pacer.offer(1)  # held

    assert sent == [0]
    assert wait_for(lambda: sent == [0, 1]), sent
    pacer.close(send_held=True)
    assert sent == [0, 1]  # nothing held any more, nothing sent twice


def test_nothing_goes_after_close_not_even_a_held_report():
    """basic/patterns/progress.mdx: progress notifications MUST stop after completion; a
    cancelled request gets nothing more (basic/patterns/cancellation.mdx)."""
    sent: list[int] = []
    pacer = Pacer(sent.append, interval=0.05)
    pacer.offer(0)
    pacer.offer(1)  # held
    pacer.close(send_held=False)
    pacer.offer(2)
    time.sleep(0.3)  # past the held report's turn: the flushing thread sends nothing

    assert sent == [0]


@pytest.mark.live
def test_a_held_report_reaches_a_live_stream_before_a_long_quiet_stretch_ends(
    live: LiveServer,
):
    """basic/patterns/progress.mdx: notifications go while the request is in progress.
    Reports 1 and 2 a moment apart, then three seconds of quiet work: 2 is held for one
    interval (50 ms), then sent, long before the reply; it used to come with the reply.
    (Half the quiet stretch is the margin for a loaded machine delivering 2 late.)"""
    arguments = {"values": [1, 2], "pauses": [0, 3.0]}
    body = remote.tool_call("progress_with_pauses", arguments, progressToken="t")
    with remote.stream(live.url("/streams/mcp"), body) as (_, reader):
        assert reader.message()["params"]["progress"] == 1
        assert reader.message()["params"]["progress"] == 2
        second_at = time.monotonic()
        final = reader.message()
        reply_at = time.monotonic()

    assert final["result"]["content"][0]["text"] == "reported"
    assert reply_at - second_at > 1.5, "the held report came with the reply"


def test_an_offer_never_waits_for_another_threads_send():
    """A task's heartbeat stores a held message (a database write) while the tool works:
    the pacer sent under its lock, so when that write waited on a row lock of the tool's
    own transaction and the tool reported again, the tool waited for the heartbeat, which
    waited for the tool, for ever. An offer made during another thread's send is held,
    and the offering thread goes on at once."""
    send = StuckSend("b")  # the heartbeat's write, stuck behind the tool's transaction
    pacer: Pacer[str] = Pacer(send, interval=60, trailing=False)
    pacer.offer("a")
    pacer.offer("b")  # held
    heartbeat = threading.Thread(target=pacer.flush)
    heartbeat.start()
    assert send.in_send.wait(10)
    tool = threading.Thread(target=pacer.offer, args=("c",))
    tool.start()
    tool.join(2)
    offered_at_once = not tool.is_alive()
    send.release.set()
    heartbeat.join(10)
    tool.join(10)

    assert offered_at_once, "the tool's report waited for the heartbeat's send"
    assert send.sent == ["a", "b"]
    pacer.flush()
    assert send.sent == ["a", "b", "c"]


def test_reports_from_several_threads_still_rise():
    """basic/patterns/progress.mdx: the progress value MUST increase with each
    notification. Eight threads report values of one counter, in rising order under the
    tool's own lock; what is sent must rise too (the check and the offer were apart, so a
    smaller value could follow a larger one)."""
    sent: list[dict[str, Any]] = []
    context = paced_context(sent.append)
    counter = itertools.count(1)
    counting = threading.Lock()

    def report() -> None:
        for _ in range(2000):
            with counting:
                value = next(counter)
            context.report_progress(value)

    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often: the race shows in one run
    try:
        with override_mcp(PROGRESS_INTERVAL=0):
            threads = [threading.Thread(target=report) for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
    finally:
        sys.setswitchinterval(switching)
    values = [note["params"]["progress"] for note in sent]

    assert values == sorted(set(values))


def test_the_flushing_thread_keeps_no_request_alive():
    """The flushing thread held the last pacer it flushed (and through it the request's
    Context, its stream and buffered notes) until the next one came due, maybe hours."""
    sent: list[int] = []
    pacer = Pacer(sent.append, interval=0.05)
    pacer.offer(0)
    pacer.offer(1)  # held, then sent by the flushing thread
    assert wait_for(lambda: sent == [0, 1])
    gone = weakref.ref(pacer)
    del pacer
    gc.collect()

    assert wait_for(lambda: gone() is None, 2), "the flushing thread still holds the pacer"


def test_a_handler_that_ends_in_a_base_exception_still_closes_its_pacer(mcp_site: Any):
    """basic/patterns/progress.mdx: progress notifications MUST stop after completion. A
    tool ending in ``SystemExit`` left its pacer open, so a held report could still go out
    after the request had ended; the pacer is closed however the handler ends."""
    sent: list[dict[str, Any]] = []

    @mcp_site.tool
    def exits(ctx: Context) -> str:
        ctx.report_progress(1)
        ctx.report_progress(2)  # held
        raise SystemExit(3)

    server = MCPServer(mcp_site)
    body = json.dumps(mcp_body("tools/call", {"name": "exits"}, meta=request_meta(progressToken=1)))
    admitted = server.admit(body.encode(), None)
    with override_mcp(PROGRESS_INTERVAL=60), pytest.raises(SystemExit):
        server.handle(admitted, emit=sent.append)  # type: ignore[arg-type]

    # 2 went at close, as the handler ended; open, the pacer would send it a minute on.
    assert [note["params"]["progress"] for note in sent] == [1, 2]


def test_a_report_never_waits_for_another_threads_send_through_the_context():
    """As the pacer's offer, so the Context's: thread A's report is being sent (a stdio
    write to a full pipe), and thread B's report must not wait for it. The Context held
    its own lock across the send, which undid the pacer's."""
    emit = StuckSend(1, key=lambda note: note["params"]["progress"])
    with override_mcp(PROGRESS_INTERVAL=0):
        context = paced_context(emit)
        first = threading.Thread(target=context.report_progress, args=(1,))
        first.start()
        assert emit.in_send.wait(10)
        second = threading.Thread(target=context.report_progress, args=(2,))
        second.start()
        second.join(2)
        reported_at_once = not second.is_alive()
        emit.release.set()
        first.join(10)
        second.join(10)

    assert reported_at_once, "thread B's report waited for thread A's send"
    assert emit.sent == [1, 2]  # A's sender sent B's report after its own, in order


def test_an_offer_in_the_senders_last_moment_is_still_sent():
    """basic/patterns/progress.mdx: a held report goes once its interval passes. The
    sender decided to stop and handed its role back in two steps; an offer between them
    was held with nobody to send it nor any flush due. Forced here: the lock pauses the
    sender right after the step that found nothing more to send."""
    sent: list[str] = []
    in_gap, offered = threading.Event(), threading.Event()
    pacer: Pacer[str] = Pacer(sent.append, interval=0.2)
    sender: threading.Thread | None = None

    class PausingLock(threading.Condition):
        def __exit__(self, *exc: Any) -> None:
            gap = (
                threading.current_thread() is sender
                and sent == ["a"]
                and pacer._held is None
                and not in_gap.is_set()
            )
            super().__exit__(*exc)
            if gap:
                in_gap.set()
                offered.wait(5)

    pacer._lock = PausingLock()
    sender = threading.Thread(target=pacer.offer, args=("a",))
    sender.start()
    in_gap.wait(5)
    pacer.offer("b")
    offered.set()
    sender.join(5)

    assert wait_for(lambda: sent == ["a", "b"], 3), f"'b' was never sent: {sent}"
    pacer.close(send_held=True)


def test_a_held_report_whose_send_failed_is_sent_again_later():
    """A transport's send that fails once (the flushing thread logs it and goes on) left
    its report held with no flush due; it is held again and its turn scheduled."""
    sent: list[str] = []
    failures = [OSError("pipe busy")]

    def send(item: str) -> None:
        if item == "b" and failures:
            raise failures.pop()
        sent.append(item)

    pacer: Pacer[str] = Pacer(send, interval=0.05)
    pacer.offer("a")
    pacer.offer("b")  # held; the flushing thread's first send of it fails

    assert wait_for(lambda: sent == ["a", "b"], 3), f"'b' was not sent again: {sent}"
    pacer.close(send_held=True)


def test_a_send_that_raises_a_base_exception_does_not_stop_the_flushing_thread():
    """A send bridged to an event loop that is shutting down raises CancelledError (no
    Exception): the flushing thread ended, and every held report on its heap (the failed
    one, scheduled again from that thread, and another request's) waited for a schedule
    that might never come."""
    import asyncio

    sent: list[str] = []
    failures = [asyncio.CancelledError()]

    def failing_once(item: str) -> None:
        if item == "b" and failures:
            raise failures.pop()
        sent.append(item)

    other_sent: list[str] = []
    failing: Pacer[str] = Pacer(failing_once, interval=0.05)
    other: Pacer[str] = Pacer(other_sent.append, interval=0.2)
    failing.offer("a")
    other.offer("x")
    failing.offer("b")  # held; the flushing thread's first send of it raises
    other.offer("y")  # held; due after that failure

    assert wait_for(lambda: other_sent == ["x", "y"], 3), f"'y' never went: {other_sent}"
    assert wait_for(lambda: sent == ["a", "b"], 3), f"'b' was not sent again: {sent}"
    failing.close(send_held=True)
    other.close(send_held=True)


def test_flush_waits_for_a_send_in_progress_then_sends_what_is_held():
    """A task's last status message is stored when its tool returns; a thread the tool
    left behind, sending at that moment, made flush() return without storing it, and the
    task's outcome was then written with the message before it."""
    send = StuckSend("b")
    pacer: Pacer[str] = Pacer(send, interval=60, trailing=False)
    pacer.offer("a")
    pacer.offer("b")
    behind = threading.Thread(target=pacer.flush)  # the left-behind thread's send
    behind.start()
    assert send.in_send.wait(10)
    pacer.offer("final")  # held while "b" is being sent
    threading.Timer(0.2, send.release.set).start()
    pacer.flush()  # the task's end: waits for "b", then stores "final"
    behind.join(10)

    assert send.sent == ["a", "b", "final"]
