"""A listen stream outlives a channel-layer ``receive`` that fails (django_mcp/listen/listener.py).

channels_redis 4.3 with redis-py 8 fails every idle wait: redis-py's default socket timeout
(5 s) equals the layer's blocking pop, so a quiet stream's ``receive`` raises
``TimeoutError`` after five seconds. That used to end the stream with an exception, five
seconds after it opened, under every documented Redis setup. Now an idle wait that timed
out is simply started again; other failures are retried too, the stream joining its group
again (a restarted Redis forgot it), and only a few of them with no event between end the
stream, without its closing result: basic/utilities/subscriptions.mdx, a close without the
listen response tells the client the stream dropped, and it may reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from django_mcp.listen import listener as listener_module
from django_mcp.listen.listener import LAYER_MAX_FAILURES, Listener
from django_mcp.protocol import subscriptions as proto
from django_mcp.sites import MCPSite
from tests.live import free_port

from . import sse

TOOLS_CHANGED = {"type": "django_mcp.change", "method": proto.TOOLS_LIST_CHANGED, "uri": None}


class FlakyLayer:
    """A channel layer whose receives fail as ``failures`` says (each a delay, then the
    exception to raise), then deliver ``event``, then wait for ever. With ``down``, every
    join after the first hangs (a Redis that stopped answering) and leaving the group
    fails."""

    def __init__(
        self,
        failures: list[tuple[float, BaseException]],
        event: dict[str, Any] | None,
        *,
        down: bool = False,
    ) -> None:
        self.failures = list(failures)
        self.event = event
        self.down = down
        self.receives = 0
        self.joins = 0

    async def new_channel(self) -> str:
        return "channel!1"

    async def group_add(self, group: str, channel: str) -> None:
        self.joins += 1
        if self.down and self.joins > 1:
            await asyncio.Event().wait()

    async def group_discard(self, group: str, channel: str) -> None:
        if self.down:
            raise GONE

    async def receive(self, channel: str) -> dict[str, Any]:
        self.receives += 1
        if self.failures:
            delay, failure = self.failures.pop(0)
            await asyncio.sleep(delay)
            raise failure
        if self.event is not None:
            event, self.event = self.event, None
            return event
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def messages(frames: list[bytes]) -> list[dict[str, Any]]:
    return [message for chunk in frames for message in sse.messages(chunk)]


async def first_frames(stream: Listener, count: int, within: float) -> list[bytes]:
    frames: list[bytes] = []
    events = stream.events()
    try:
        async with asyncio.timeout(within):
            async for frame in events:
                frames.append(frame)
                if len(frames) == count:
                    break
    finally:
        await events.aclose()
    return frames


TIMEOUT = TimeoutError("Timeout reading from 127.0.0.1:6379")
GONE = ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


@pytest.fixture
def stream(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Listener:
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": 60,
        "LISTEN_MAX_SECONDS": 60,
    }
    monkeypatch.setattr(listener_module, "LAYER_RETRY_SECONDS", 0.1)
    return Listener(MCPSite("flaky"), "listen-1", proto.SubscriptionFilter(tools_list_changed=True))


def serve(
    stream: Listener, monkeypatch: pytest.MonkeyPatch, layer: FlakyLayer, count: int = 10
) -> list[bytes]:
    """The stream's first ``count`` frames, or all of them if it ends sooner."""
    monkeypatch.setattr(listener_module, "channel_layer", lambda: layer)
    return asyncio.run(first_frames(stream, count, within=10))


def test_idle_waits_that_time_out_are_started_again_and_count_for_nothing(stream, monkeypatch):
    layer = FlakyLayer([(0.15, TIMEOUT)] * (LAYER_MAX_FAILURES + 2), TOOLS_CHANGED)

    acknowledged, changed = messages(serve(stream, monkeypatch, layer, count=2))

    assert acknowledged == proto.acknowledgement("listen-1", stream.filter)
    assert changed["method"] == proto.TOOLS_LIST_CHANGED
    # One receive per timeout and one for the event; the inbox may have started the next.
    assert layer.receives in (LAYER_MAX_FAILURES + 3, LAYER_MAX_FAILURES + 4)
    assert layer.joins == 1 + LAYER_MAX_FAILURES + 2  # each timeout: joined again, and fine


def test_after_a_failure_the_stream_joins_its_group_again_and_goes_on(stream, monkeypatch):
    """A Redis that restarted forgot the group: without joining again, the stream would
    keep waiting on a channel nobody sends to."""
    layer = FlakyLayer([(0.0, GONE), (0.0, GONE)], TOOLS_CHANGED)

    changed = messages(serve(stream, monkeypatch, layer, count=2))[1]

    assert changed["method"] == proto.TOOLS_LIST_CHANGED
    assert layer.joins == 3


@pytest.mark.parametrize(
    "failure",
    [(0.0, GONE), (0.15, GONE), (0.0, TIMEOUT), (0.0, asyncio.CancelledError())],
    ids=["refused-at-once", "refused-slowly", "timed-out-at-once", "cancelled-by-the-layer"],
)
def test_failures_with_no_event_between_end_the_stream_as_dropped(
    stream, monkeypatch, caplog, failure
):
    layer = FlakyLayer([failure] * 10, None)

    frames = serve(stream, monkeypatch, layer)

    assert messages(frames) == [proto.acknowledgement("listen-1", stream.filter)]
    assert layer.receives == LAYER_MAX_FAILURES
    assert caplog.text.count("channel-layer receive failed") == LAYER_MAX_FAILURES


@pytest.mark.parametrize(
    "failure", [(0.0, GONE), (0.15, TIMEOUT)], ids=["refused", "timed-out-after-waiting"]
)
def test_a_layer_that_stopped_answering_drops_the_stream_soon(stream, monkeypatch, caplog, failure):
    """A hung Redis: receives fail (or time out, which alone would pass for an idle
    wait), joins never return, leaving the group fails. Each join is given up after the
    retry delay, so the stream drops within a few of them, and ends without raising."""
    layer = FlakyLayer([failure] * 10, None, down=True)

    started = time.monotonic()
    frames = serve(stream, monkeypatch, layer)

    assert messages(frames) == [proto.acknowledgement("listen-1", stream.filter)]
    assert stream.dropped is True
    assert layer.receives == LAYER_MAX_FAILURES
    assert time.monotonic() - started < 5
    assert "joining its group again failed too" in caplog.text


def test_over_stdio_a_dropped_stream_answers_its_request_with_an_error(monkeypatch, settings):
    """basic/utilities/subscriptions.mdx: over HTTP a close without the listen result
    tells the client the stream dropped; stdio has no connection to close, so the listen
    request gets -32603 instead of waiting for ever."""
    import io
    import json
    import threading

    from django.contrib.auth.models import AnonymousUser

    from django_mcp.server.dispatch import MCPServer
    from django_mcp.stdio.transport import LISTEN_DROPPED, StdioServer
    from tests.helpers import mcp_body

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_SECONDS": 60}
    monkeypatch.setattr(listener_module, "LAYER_RETRY_SECONDS", 0.05)
    layer = FlakyLayer([(0.0, GONE)] * 10, None)
    monkeypatch.setattr(listener_module, "channel_layer", lambda: layer)
    site = MCPSite("flaky-stdio")
    site.tool(name="t")(lambda: "x")
    server = MCPServer(site)
    body = mcp_body("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=7)
    admitted = server.admit(json.dumps(body).encode(), None)
    output = io.BytesIO()

    stdio = StdioServer(server, output, user=AnonymousUser())
    call = stdio.inflight.admit(7)  # in flight, as StdioServer.start makes it
    assert call is not None
    call.stream = threading.Event()
    stdio._stream(admitted, None, call)

    acknowledged, answer = [json.loads(line) for line in output.getvalue().splitlines()]
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert answer == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32603, "message": LISTEN_DROPPED},
    }


def redis_available() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.live
@pytest.mark.skipif(not redis_available(), reason="needs Redis at 127.0.0.1:6379")
def test_a_quiet_stream_on_redis_with_default_timeouts_still_delivers(stream, settings):
    """The documented channels_redis layer as a project first writes it (no socket
    timeout of its own): the stream stays quiet past five seconds, then gets the change."""
    pytest.importorskip("channels_redis")
    from channels.layers import channel_layers

    prefix = f"dmcp-test-{uuid.uuid4().hex[:8]}"
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"], "prefix": prefix},
        }
    }
    channel_layers.backends.clear()

    async def scenario() -> list[bytes]:
        events = stream.events()
        frames = [await anext(events)]  # the acknowledgement, with the group joined
        waiting = asyncio.ensure_future(anext(events))
        await asyncio.sleep(6.5)  # past redis-py's five-second socket timeout
        assert not waiting.done()
        await listener_module.channel_layer().group_send(stream.group, TOOLS_CHANGED)
        async with asyncio.timeout(10):
            frames.append(await waiting)
        await events.aclose()
        return frames

    try:
        frames = asyncio.run(scenario())
    finally:
        channel_layers.backends.clear()
    assert messages(frames)[-1]["method"] == proto.TOOLS_LIST_CHANGED


@contextlib.contextmanager
def private_redis(port: int) -> Iterator[subprocess.Popen[bytes]]:
    """A Redis of this test's own, keeping nothing on disk, until the block ends."""
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:  # bounded wait for it to accept connections
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        yield process
    finally:
        process.kill()
        process.wait(timeout=10)


@pytest.mark.live
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_a_stream_hears_changes_again_after_redis_restarts(stream, settings):
    """Redis restarted (and, keeping nothing, forgot every group): the stream's receive
    fails, it joins its group again, and the next change reaches it."""
    pytest.importorskip("channels_redis")
    from channels.layers import channel_layers

    port = free_port()
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": f"redis://127.0.0.1:{port}/0", "socket_timeout": 30}],
                "prefix": "dmcp-restart",
            },
        }
    }
    channel_layers.backends.clear()

    async def scenario() -> dict[str, Any]:
        with private_redis(port) as first:
            events = stream.events()
            await anext(events)  # the acknowledgement, with the group joined
            waiting = asyncio.ensure_future(anext(events))
            await asyncio.sleep(0.3)
            first.kill()
            first.wait(timeout=10)
        with private_redis(port):
            await asyncio.sleep(3)  # the failed receive, the retry and the join again
            assert not waiting.done()
            await listener_module.channel_layer().group_send(stream.group, TOOLS_CHANGED)
            async with asyncio.timeout(10):
                frame = await waiting
            await events.aclose()
        (message,) = sse.messages(frame)
        return message

    try:
        message = asyncio.run(scenario())
    finally:
        channel_layers.backends.clear()
    assert message["method"] == proto.TOOLS_LIST_CHANGED


class UnjoinableLayer(FlakyLayer):
    """A channel layer whose every join fails (Redis refusing connections) or never
    returns (a Redis that stopped answering), from the stream's very first join."""

    def __init__(self, *, hangs: bool) -> None:
        super().__init__([], TOOLS_CHANGED)
        self.hangs = hangs

    async def group_add(self, group: str, channel: str) -> None:
        self.joins += 1
        if self.hangs:
            await asyncio.Event().wait()
        raise GONE


@pytest.mark.parametrize("hangs", [False, True], ids=["refused", "hung"])
def test_a_stream_whose_first_join_fails_drops_unacknowledged(stream, monkeypatch, hangs):
    """basic/patterns/subscriptions.mdx: a close without the listen response tells the
    client the stream dropped, and it may reconnect. A layer down as the stream opens
    used to raise out of the stream (an exception in the server's application after a
    200) or, hung, hold it with no deadline, keep-alive or shutdown; now the first join
    is bounded like every later one, and the stream ends unacknowledged."""
    layer = UnjoinableLayer(hangs=hangs)

    started = time.monotonic()
    frames = serve(stream, monkeypatch, layer)

    assert frames == []
    assert stream.dropped is True
    assert layer.receives == 0
    assert time.monotonic() - started < 5


def test_a_stream_opened_as_the_server_stops_still_gets_its_closing_result(stream, monkeypatch):
    """basic/patterns/subscriptions.mdx: a server ending a subscription SHOULD send the
    listen result. At a shutdown the join is given up at once, and the stream, joined
    or not, is acknowledged and closed with its result, not dropped."""
    from django_mcp.listen import shutdown

    monkeypatch.setattr(shutdown, "_stopping", True)
    layer = UnjoinableLayer(hangs=True)

    sent = messages(serve(stream, monkeypatch, layer))

    assert sent[0] == proto.acknowledgement("listen-1", stream.filter)
    assert sent[1] == proto.closing_result("listen-1")
    assert len(sent) == 2
    assert stream.dropped is False


@pytest.mark.django_db
@pytest.mark.usefixtures("streams_urls")
def test_over_http_a_layer_down_as_the_stream_opens_ends_it_and_frees_its_place(
    client, monkeypatch, settings
):
    """The same through the WSGI path: the stream's body ends empty (never an exception
    out of the server's iterator) and its place in the stream limits is given back."""
    from django_mcp.listen import limits
    from tests.helpers import mcp_post

    from .remote import STREAMS

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": 4}
    monkeypatch.setattr(listener_module, "LAYER_RETRY_SECONDS", 0.1)
    monkeypatch.setattr(listener_module, "channel_layer", lambda: UnjoinableLayer(hangs=False))
    before = limits.open_streams()
    params = {"notifications": {"toolsListChanged": True}}

    response = mcp_post(client, "subscriptions/listen", params, id="down", path=STREAMS)
    assert response["Content-Type"] == "text/event-stream"
    body = b"".join(response.streaming_content)
    response.close()

    assert body == b""
    assert limits.open_streams() == before
