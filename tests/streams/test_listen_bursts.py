"""A burst of changes reaches a listen stream whole, or ends it visibly (listen/inbox.py).

A channel layer holds at most ``capacity`` events waiting for one channel (100 by default,
in-memory and ``channels_redis`` alike) and drops the next ones without a word. A stream
checks each ``notifications/resources/updated`` against its caller in a worker thread, so
a bulk save of watched rows outran it: a review measured 300 updates in a row reaching a
stream as about 200, and the client never learnt of the rest. basic/utilities/
subscriptions.mdx: a stream that closes without its listen result tells the client that
it dropped and that it may reconnect; a silent gap tells it nothing.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from django_mcp.listen import inbox as inbox_module
from django_mcp.listen import listener as listener_module
from django_mcp.listen.layer import confined
from django_mcp.listen.listener import Listener
from django_mcp.protocol import sse
from django_mcp.protocol import subscriptions as proto
from django_mcp.sites import MCPSite


def update(number: int) -> dict[str, Any]:
    return {"type": "mcp.change", "method": proto.RESOURCE_UPDATED, "uri": f"test://{number}"}


@pytest.fixture
def stream(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Listener:
    """A stream whose every check takes a millisecond (a permission read in a thread)."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_KEEPALIVE_SECONDS": 60}
    listener = Listener(MCPSite("bursts"), "listen-1", proto.SubscriptionFilter())

    async def checked_render(event: dict[str, Any]) -> bytes:
        await asyncio.sleep(0.001)
        return str(event["uri"]).encode()

    monkeypatch.setattr(listener, "render", checked_render)
    return listener


async def heard(stream: Listener, layer: Any, events: list[dict[str, Any]]) -> list[bytes]:
    """What the stream sends after its acknowledgement, ``events`` sent all at once."""
    frames: list[bytes] = []
    generator = stream.events()
    try:
        await anext(generator)  # the acknowledgement: joined
        reading = asyncio.ensure_future(anext(generator))  # the stream waits for events
        await asyncio.sleep(0.05)
        for event in events:
            await layer.group_send(stream.group, event)
        async with asyncio.timeout(10):
            frames.append(await reading)
            async for frame in generator:
                frames.append(frame)
                if len(frames) == len(events):
                    break
    finally:
        await generator.aclose()
    return frames


def test_a_burst_larger_than_the_layers_capacity_reaches_the_stream_whole(stream, monkeypatch):
    layer = InMemoryChannelLayer(capacity=100)
    monkeypatch.setattr(listener_module, "channel_layer", lambda: layer)

    frames = asyncio.run(heard(stream, layer, [update(n) for n in range(300)]))

    assert frames == [f"test://{n}".encode() for n in range(300)]
    assert not stream.dropped


def test_the_same_change_waiting_twice_is_sent_once(stream, monkeypatch):
    layer = InMemoryChannelLayer(capacity=100)
    monkeypatch.setattr(listener_module, "channel_layer", lambda: layer)

    async def scenario() -> list[bytes]:
        generator = stream.events()
        try:
            await anext(generator)
            first = asyncio.ensure_future(anext(generator))
            await asyncio.sleep(0.05)
            for number in (1, 2, 2, 2, 3, 2):
                await layer.group_send(stream.group, update(number))
            frames = [await first]
            async with asyncio.timeout(0.5):
                async for frame in generator:
                    frames.append(frame)
        except TimeoutError:
            pass
        finally:
            await generator.aclose()
        return frames

    # 1 went at once; 2 waited while it was checked, and came again three times meanwhile.
    assert asyncio.run(scenario()) == [b"test://1", b"test://2", b"test://3"]


def test_a_stream_too_far_behind_ends_as_dropped_not_with_a_silent_gap(stream, monkeypatch):
    layer = InMemoryChannelLayer(capacity=100)
    monkeypatch.setattr(listener_module, "channel_layer", lambda: layer)
    monkeypatch.setattr(inbox_module, "MAX_PENDING_EVENTS", 10)

    async def scenario() -> list[bytes]:
        frames: list[bytes] = []
        generator = stream.events()
        try:
            await anext(generator)
            reading = asyncio.ensure_future(anext(generator))
            await asyncio.sleep(0.05)
            for number in range(50):
                await layer.group_send(stream.group, update(number))
            async with asyncio.timeout(10):
                frames.append(await reading)
                async for frame in generator:
                    frames.append(frame)
        finally:
            await generator.aclose()
        return frames

    frames = asyncio.run(scenario())

    assert stream.dropped
    assert len(frames) < 50
    assert not any(b"result" in frame for frame in frames)  # no closing result


def test_a_burst_reaches_a_wsgi_stream_whose_client_reads_slowly(stream, monkeypatch, settings):
    """Under WSGI (and stdio) the stream's loop ran only while the next frame was awaited,
    so while the server wrote a frame to a slow client nothing read the layer: 300
    updates reached the stream as about 100, with no sign of the gap."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_KEEPALIVE_SECONDS": 0.5}
    layer = confined(InMemoryChannelLayer(capacity=100))
    monkeypatch.setattr(listener_module, "channel_layer", lambda: layer)
    frames: list[bytes] = []
    events = stream.sync_events()

    def publish() -> None:
        # About one a millisecond: five times faster than the client reads, so the old
        # loop (one receive per frame written) overflowed the layer's 100 after about
        # 125 ms; the inbox may be kept from running for about 100 ms (a loaded CI
        # machine) without losing any. Sent unpaced, the publisher and the layer's thread
        # could hold the GIL between them long enough to fill the layer before the inbox
        # ran at all (a MariaDB pass in CI lost 4 of 300 that way).
        for number in range(300):
            layer.group_send_now(stream.group, update(number), 5)
            time.sleep(0.001)

    try:
        next(events)  # the acknowledgement: joined
        publisher = threading.Thread(target=publish)
        publisher.start()
        for frame in events:
            if frame == sse.KEEP_ALIVE:
                break  # nothing more is coming
            frames.append(frame)
            time.sleep(0.005)  # the write to a slow client
        publisher.join()
    finally:
        events.close()

    assert frames == [f"test://{n}".encode() for n in range(300)] or stream.dropped
