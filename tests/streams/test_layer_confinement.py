"""The in-memory channel layer is used from one thread only (django_mcp/listen/layer.py).

basic/patterns/subscriptions.mdx: a listen stream carries the changes its filter asked for
as they happen. Channels' in-memory layer (the default) expects one event loop, while a
process publishes changes from many threads (a stream's handler thread, ``on_commit``, a
task worker) and under WSGI runs each stream on a loop of its own. Every operation of the
listen package on that layer therefore runs on one loop in one thread: an event published
from any thread wakes the listener at once, never at its next keep-alive.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer, channel_layers

from django_mcp import notify_tools_changed
from django_mcp.listen import fanout
from django_mcp.listen.layer import ConfinedLayer
from django_mcp.listen.listener import Listener
from django_mcp.protocol import subscriptions as proto
from django_mcp.sites import MCPSite

from . import sse

KEEP_ALIVE = 60.0


@pytest.fixture
def quiet_keep_alives(settings: Any) -> None:
    """Keep-alives far apart: a listener that only wakes for one would miss the deadline."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": KEEP_ALIVE,
        "LISTEN_MAX_SECONDS": KEEP_ALIVE * 2,
    }


def listener(site: MCPSite) -> Listener:
    return Listener(site, "listen-1", proto.SubscriptionFilter(tools_list_changed=True))


@pytest.mark.usefixtures("quiet_keep_alives")
@pytest.mark.parametrize("publisher", ["plain-thread", "running-loop"])
def test_a_change_published_from_another_thread_reaches_an_asgi_listener_at_once(
    publisher: str,
):
    """A change published from a thread that is not the listener's (a sync tool in a
    stream's handler thread; an ``async def`` tool on a loop of its own) wakes the
    listener: it arrives long before the next keep-alive (60 s away)."""
    site = MCPSite("confined-publish")

    def publish() -> None:
        if publisher == "plain-thread":
            notify_tools_changed(site=site)
        else:

            async def tool() -> None:
                notify_tools_changed(site=site)

            asyncio.run(tool())

    async def scenario() -> bytes:
        events = listener(site).events()
        try:
            await events.__anext__()  # the acknowledgement: the stream has joined its group
            threading.Thread(target=publish, daemon=True).start()
            return await asyncio.wait_for(events.__anext__(), 10)
        finally:
            await events.aclose()

    frame = asyncio.run(scenario())

    [message] = sse.messages(frame)
    assert message["method"] == proto.TOOLS_LIST_CHANGED


class RecordingLayer(InMemoryChannelLayer):  # type: ignore[misc]
    """An in-memory layer that notes the thread of every operation."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.threads: set[str] = set()

    def _note(self) -> None:
        self.threads.add(threading.current_thread().name)

    async def new_channel(self, prefix: str = "specific.") -> str:
        self._note()
        name: str = await super().new_channel(prefix)
        return name

    async def group_add(self, group: str, channel: str) -> None:
        self._note()
        await super().group_add(group, channel)

    async def group_discard(self, group: str, channel: str) -> None:
        self._note()
        await super().group_discard(group, channel)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self._note()
        await super().group_send(group, message)

    async def receive(self, channel: str) -> dict[str, Any]:
        self._note()
        message: dict[str, Any] = await super().receive(channel)
        return message


@pytest.fixture
def recording_layer(settings: Any) -> Iterator[RecordingLayer]:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": f"{__name__}.RecordingLayer"}}
    channel_layers.backends.clear()
    layer = channel_layers["default"]
    assert isinstance(layer, RecordingLayer)
    yield layer
    channel_layers.backends.clear()


@pytest.mark.usefixtures("quiet_keep_alives")
def test_every_operation_on_an_in_memory_layer_runs_on_one_thread(
    recording_layer: RecordingLayer,
):
    """An ASGI stream on one loop, a WSGI stream on a loop of its own in another thread, and
    publishers in plain threads and on running loops: the layer sees one thread, its own.
    (Before, each used it from its own thread, and a publish racing a stream's start or
    end failed with "dictionary changed size during iteration".)"""
    site = MCPSite("confined-threads")
    assert isinstance(fanout.channel_layer(), ConfinedLayer)

    def wsgi_stream() -> None:
        frames = listener(site).sync_events()
        next(frames)  # acknowledged
        for frame in frames:
            if not frame.startswith(b":"):
                break
        frames.close()

    async def asgi_stream() -> None:
        events = listener(site).events()
        await events.__anext__()
        wsgi = threading.Thread(target=wsgi_stream, daemon=True)
        wsgi.start()
        while len(recording_layer.groups.get(fanout.group_name(site.name), {})) < 2:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(notify_tools_changed, site=site)
        await asyncio.wait_for(events.__anext__(), 10)
        await events.aclose()
        await asyncio.to_thread(wsgi.join, 10)
        assert not wsgi.is_alive()

    asyncio.run(asgi_stream())

    assert recording_layer.threads == {"mcp-channel-layer"}


def test_any_other_layer_is_used_as_it_is(settings: Any):
    """Only the in-memory layer is confined: channels_redis is built for many loops."""
    from channels_redis.core import RedisChannelLayer  # type: ignore[import-untyped]

    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:6379/0"]},
        }
    }
    channel_layers.backends.clear()
    try:
        assert isinstance(fanout.channel_layer(), RedisChannelLayer)
    finally:
        channel_layers.backends.clear()
