"""A listen stream outlives a channel-layer ``receive`` that fails (django_mcp/listen/listener.py).

channels_redis 4.3 with redis-py 8 fails every idle wait: redis-py's default socket timeout
(5 s) equals the layer's blocking pop, so a quiet stream's ``receive`` raises
``TimeoutError`` after five seconds. That used to end the stream with an exception and no
closing result, five seconds after it opened, under every documented Redis setup. A receive
that fails after waiting is now simply started again; only failures in quick succession
(the layer is down) end the stream, with its closing result so the client reconnects
(basic/utilities/subscriptions.mdx: a stream ends with the listen result).
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from typing import Any

import pytest

from django_mcp.listen import listener as listener_module
from django_mcp.listen.listener import LAYER_QUICK_FAILURES, Listener
from django_mcp.protocol import subscriptions as proto
from django_mcp.sites import MCPSite

from . import sse

TOOLS_CHANGED = {"type": "django_mcp.change", "method": proto.TOOLS_LIST_CHANGED, "uri": None}


class FlakyLayer:
    """A channel layer whose receives fail as ``failures`` says (each a delay before a
    ``TimeoutError``), then deliver ``event``, then wait for ever."""

    def __init__(self, failures: list[float], event: dict[str, Any] | None) -> None:
        self.failures = list(failures)
        self.event = event
        self.receives = 0

    async def new_channel(self) -> str:
        return "channel!1"

    async def group_add(self, group: str, channel: str) -> None:
        pass

    async def group_discard(self, group: str, channel: str) -> None:
        pass

    async def receive(self, channel: str) -> dict[str, Any]:
        self.receives += 1
        if self.failures:
            await asyncio.sleep(self.failures.pop(0))
            raise TimeoutError("Timeout reading from 127.0.0.1:6379")
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


@pytest.fixture
def stream(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Listener:
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": 60,
        "LISTEN_MAX_SECONDS": 60,
    }
    return Listener(MCPSite("flaky"), "listen-1", proto.SubscriptionFilter(tools_list_changed=True))


def test_a_receive_that_times_out_after_waiting_is_started_again(stream, monkeypatch):
    layer = FlakyLayer([1.2, 1.2], TOOLS_CHANGED)  # two idle waits that end in TimeoutError
    monkeypatch.setattr(listener_module, "channel_layer", lambda: layer)

    frames = asyncio.run(first_frames(stream, 2, within=10))

    acknowledged, changed = messages(frames)
    assert acknowledged == proto.acknowledgement("listen-1", stream.filter)
    assert changed["method"] == proto.TOOLS_LIST_CHANGED
    assert layer.receives == 3


def test_quick_failures_in_a_row_end_the_stream_with_its_closing_result(
    stream, monkeypatch, caplog
):
    layer = FlakyLayer([0.0] * 10, None)  # the layer is down: every receive fails at once
    monkeypatch.setattr(listener_module, "channel_layer", lambda: layer)
    monkeypatch.setattr(listener_module, "LAYER_RETRY_SECONDS", 0.05)

    frames = asyncio.run(first_frames(stream, 10, within=10))

    assert messages(frames)[-1] == proto.closing_result("listen-1")
    assert layer.receives == LAYER_QUICK_FAILURES
    assert "channel-layer receive failed" in caplog.text


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
