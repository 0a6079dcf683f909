"""Keep-alives for a streamed call whose handler is quiet before it reports anything.

basic/transports/streamable-http.mdx, "Sending Messages": a server answers a JSON-RPC
request with either ``Content-Type: application/json`` or ``text/event-stream``, and the
client MUST support both; its note under "Receiving Messages": an SSE comment line (``:``)
keeps intermediaries and idle timeouts from closing a quiet stream, and clients ignore it.

A call with a ``progressToken`` used to write nothing until its first notification or its
reply, since the answer could still turn out to be plain JSON; a tool quiet for longer than
a proxy's idle timeout (nginx's ``proxy_read_timeout``, 60 s by default) lost its
connection before its first report. Now, after ``LISTEN_KEEPALIVE_SECONDS`` with neither,
the answer becomes an SSE stream that opens with a keep-alive comment and goes on as a live
stream; a reply within the interval is still plain JSON.

Driven in-process through Django's ASGI handler and through ``NativeMCP``, as
``test_progress_keepalive`` drives them, and once over TCP through the live servers.
Nothing is timed: the tools wait until the test
has seen a keep-alive reach the client (without one, until ``QUIET_GUARD_SECONDS``: the
test then fails).
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

import pytest

from django_mcp.exceptions import RequestCancelled
from django_mcp.http import streaming
from django_mcp.protocol import sse as wire
from django_mcp.server.context import Context
from django_mcp.sites import MCPSite
from tests.helpers import override_mcp
from tests.records.test_streamed_records import row

from . import remote, sse
from .test_live_stream_limit import APPS, Client, join_stream_threads

if TYPE_CHECKING:
    from pathlib import Path

    from tests.live import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)

#: How long a quiet tool waits for the keep-alive that lets it go on; shorter than the
#: client's hang guard, so that a server sending none fails the test rather than hanging it.
QUIET_GUARD_SECONDS = 10
KEEPALIVE = 0.05  # LISTEN_KEEPALIVE_SECONDS in these tests


class Seen:
    """What the tools and the client tell each other."""

    def __init__(self) -> None:
        self.kept_alive = threading.Event()
        self.record: list[str] = []


@pytest.fixture
def seen(mcp_site: MCPSite) -> Seen:
    seen = Seen()

    @mcp_site.tool
    def silent(ctx: Context) -> str:
        """Report nothing; answer once a keep-alive reached the client."""
        seen.kept_alive.wait(QUIET_GUARD_SECONDS)
        return "done"

    @mcp_site.tool
    def late_report(ctx: Context) -> str:
        """Report progress only once a keep-alive reached the client."""
        seen.kept_alive.wait(QUIET_GUARD_SECONDS)
        ctx.report_progress(1, total=1)
        return "reported"

    @mcp_site.tool
    def silent_until_cancelled(ctx: Context) -> str:
        """Report nothing; wait to be cancelled, then stop at a checkpoint."""
        cancelled = threading.Event()
        ctx.on_cancel(cancelled.set)
        cancelled.wait(QUIET_GUARD_SECONDS)
        try:
            ctx.check_cancelled()
        except RequestCancelled:
            seen.record.append("cancelled")
            raise
        seen.record.append("finished")
        return "finished"

    @mcp_site.tool
    def asks_late(ctx: Context) -> str:
        """Once a keep-alive went out, ask for input the client cannot give (-32021)."""
        seen.kept_alive.wait(QUIET_GUARD_SECONDS)
        ctx.elicit("Which one?")
        return "asked"

    @mcp_site.tool
    def prompt(ctx: Context) -> str:
        """Answer at once."""
        return "prompt"

    @mcp_site.tool
    def pause(ctx: Context) -> str:
        """Report nothing for a few keep-alive intervals, then answer."""
        threading.Event().wait(KEEPALIVE * 4)
        return "paused"

    return seen


class Watching(Client):
    """A client that tells the tools when a keep-alive comment reaches it, and may leave
    then (``leave``: the client closes the stream, which cancels the request)."""

    def __init__(self, tool: str, seen: Seen, *, leave: bool = False) -> None:
        super().__init__(tool)
        self.seen = seen
        self.leave = leave

    async def send(self, message: dict[str, Any]) -> None:
        await super().send(message)
        if message["type"] == "http.response.body" and wire.KEEP_ALIVE in message.get("body", b""):
            self.seen.kept_alive.set()
            if self.leave:
                self.gone.set()

    @property
    def start(self) -> dict[str, Any]:
        return next(m for m in self.messages if m["type"] == "http.response.start")

    @property
    def headers(self) -> dict[bytes, bytes]:
        return {bytes(k).lower(): bytes(v) for k, v in self.start["headers"]}

    @property
    def received(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.messages if m["type"].endswith("body"))


def call(app_name: str, client: Watching, keep_alive: float = KEEPALIVE) -> None:
    with override_mcp(LISTEN_KEEPALIVE_SECONDS=keep_alive):
        asyncio.run(client.call(APPS[app_name]()))
    join_stream_threads()


@pytest.fixture(params=sorted(APPS))
def app_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def test_a_handler_quiet_past_the_interval_gets_a_stream_that_opens_with_a_keep_alive(
    app_name: str, seen: Seen
):
    """No notification and no reply within ``LISTEN_KEEPALIVE_SECONDS``: the response is
    an SSE stream (200, the stream's headers), its first bytes a keep-alive comment, its
    only message the reply; recorded with that reply once the stream ends."""
    client = Watching("silent", seen)
    call(app_name, client)

    assert seen.kept_alive.is_set(), "no keep-alive while the handler was quiet"
    assert client.start["status"] == 200
    assert client.content_type == sse.CONTENT_TYPE
    assert client.headers[b"cache-control"] == b"no-cache"
    assert client.headers[b"x-accel-buffering"] == b"no"
    assert client.received.startswith(wire.KEEP_ALIVE)
    [reply] = client.answer()  # the comments are not messages
    assert reply["result"]["content"][0]["text"] == "done"
    assert streaming.live_streams() == 0
    logged = row("silent")
    assert (logged["outcome"], logged["http_status"]) == ("ok", 200)


def test_notifications_after_the_first_keep_alive_go_on_the_same_stream(app_name: str, seen: Seen):
    client = Watching("late_report", seen)
    call(app_name, client)

    assert client.content_type == sse.CONTENT_TYPE
    assert client.received.index(wire.KEEP_ALIVE) < client.received.index(b'"progress":1')
    note, reply = client.answer()
    sse.check_message(note)
    assert note["params"]["progressToken"] == "p-late_report"
    assert reply["result"]["content"][0]["text"] == "reported"


def test_closing_the_stream_after_the_first_keep_alive_cancels_the_handler(
    app_name: str, seen: Seen
):
    """basic/transports/streamable-http.mdx, "Cancellation": closing the SSE response
    stream is the cancellation of the request, also before anything but a keep-alive was
    sent on it; nothing more is written, and the record says the client left (499)."""
    client = Watching("silent_until_cancelled", seen, leave=True)
    call(app_name, client)

    assert seen.kept_alive.is_set()
    assert seen.record == ["cancelled"]
    assert client.received == wire.KEEP_ALIVE
    assert streaming.live_streams() == 0
    assert row("silent_until_cancelled")["http_status"] == 499


def test_an_error_after_the_stream_opened_is_its_last_event_under_200(app_name: str, seen: Seen):
    """Once the stream is open its status is sent: an error that plain JSON would have
    answered with 400 (-32021, a client capability the call needs) is the stream's final
    message instead, as after a first notification."""
    client = Watching("asks_late", seen)
    call(app_name, client)

    assert client.start["status"] == 200
    assert client.content_type == sse.CONTENT_TYPE
    [reply] = client.answer()
    assert reply["error"]["code"] == -32021
    logged = row("asks_late")
    assert (logged["error_code"], logged["http_status"]) == (-32021, 200)


def test_a_reply_within_the_interval_is_still_plain_json(app_name: str, seen: Seen):
    client = Watching("prompt", seen)
    call(app_name, client, keep_alive=30)

    assert client.content_type == "application/json"
    assert wire.KEEP_ALIVE not in client.received
    [reply] = client.answer()
    assert reply["result"]["content"][0]["text"] == "prompt"


def test_a_quiet_call_past_max_live_streams_is_answered_buffered_without_keep_alives(
    app_name: str, seen: Seen
):
    """With no live-stream thread to spare, the handler runs in the view's thread, which
    cannot write while it runs: no keep-alive, and a reply with no notification before it
    is plain JSON, as under WSGI (docs/guides/streaming.md)."""
    client = Watching("pause", seen)
    with override_mcp(MAX_LIVE_STREAMS=0):
        call(app_name, client)

    assert client.content_type == "application/json"
    assert wire.KEEP_ALIVE not in client.received
    assert client.answer()[0]["result"]["content"][0]["text"] == "paused"


@pytest.mark.live
def test_a_live_server_opens_a_quiet_call_s_stream_with_a_keep_alive(
    live: LiveServer, tmp_path: Path
):
    """The same over TCP through Daphne, uvicorn and the native path (their keep-alive
    interval is ``tests.streams.settings``' 0.2 s): the stream's headers and a keep-alive
    reach the client while the tool is still quiet, and its reply follows on that stream
    once it answers (basic/transports/streamable-http.mdx, "Sending Messages")."""
    spoken = tmp_path / "spoken"
    body = remote.tool_call("quiet_until", {"path": str(spoken)}, id=5, progressToken="q")

    with remote.stream(live.url(remote.STREAMS), body) as (response, reader):
        assert response.status_code == 200
        assert response.headers["content-type"].split(";")[0] == sse.CONTENT_TYPE
        assert response.headers["x-accel-buffering"] == "no"
        assert reader.frame().is_comment  # the tool has not answered: it waits for this
        spoken.touch()
        frames = reader.rest()

    [reply] = [frame.message for frame in frames if frame.message is not None]
    sse.check_message(reply, "tools/call")
    assert reply["id"] == 5
    assert reply["result"]["content"][0]["text"] == "spoke"


def test_once_the_view_stopped_waiting_a_reply_goes_to_the_stream_not_to_json():
    """The two sides of the instant the wait runs out, without threads: a reply put before
    it is the first message (plain JSON); once the wait has taken the first place, a
    reply put after it is queued for the stream, behind the opening keep-alive, and never
    lost between the two."""
    from django_mcp.server.dispatch import Reply

    early = streaming.LiveStream(None, None, None, caller="-")  # type: ignore[arg-type]  # no thread
    early._put(Reply(1, result={"early": True}))
    assert isinstance(early.first_message(within=0), Reply)

    late = streaming.LiveStream(None, None, None, caller="-")  # type: ignore[arg-type]
    assert late.first_message(within=0) is streaming.QUIET
    late._put(Reply(1, result={"late": True}))

    async def read() -> list[bytes]:
        return [part async for part in late.events()]

    with override_mcp(LISTEN_KEEPALIVE_SECONDS=30):
        parts = asyncio.run(read())
    assert parts[0] == wire.KEEP_ALIVE
    assert [message["result"]["late"] for message in sse.messages(b"".join(parts))] == [True]
