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
import gc
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer, channel_layers

from django_mcp import notify_tools_changed
from django_mcp.listen import fanout
from django_mcp.listen import layer as layer_module
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


class SlowJoinLayer(InMemoryChannelLayer):  # type: ignore[misc]
    """A layer whose join has happened before its caller hears of it (as when the command
    reached Redis): a cancellation in between finds the stream a member already."""

    async def group_add(self, group: str, channel: str) -> None:
        await super().group_add(group, channel)
        await asyncio.sleep(0.5)


@pytest.fixture
def layer_class(settings: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The configured layer, of the class the test names (``indirect``)."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": f"{__name__}.{request.param}"}}
    channel_layers.backends.clear()
    yield channel_layers["default"]
    channel_layers.backends.clear()


@pytest.mark.parametrize("layer_class", ["SlowJoinLayer"], indirect=True)
def test_a_stream_cancelled_while_it_joins_leaves_its_group(layer_class: Any):
    """basic/patterns/subscriptions.mdx: "The server keeps no subscription state beyond
    the open stream". A client that leaves the moment it sent listen gets its request
    cancelled while the stream joins the site's group; the join may have happened all
    the same, and the stream must leave again, or every later event is copied to a queue
    nobody reads."""
    site = MCPSite("confined-cancel")

    async def scenario() -> None:
        events = listener(site).events()
        starting = asyncio.ensure_future(events.__anext__())
        await asyncio.sleep(0.1)  # joined on the layer's thread; the answer not yet back
        starting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starting

    asyncio.run(scenario())

    assert layer_class.groups.get(fanout.group_name(site.name), {}) == {}


class LateJoinLayer(InMemoryChannelLayer):  # type: ignore[misc]
    """A layer whose join lands only after a while (a Redis slow to answer)."""

    async def group_add(self, group: str, channel: str) -> None:
        await asyncio.sleep(0.3)
        await super().group_add(group, channel)


@pytest.mark.parametrize("layer_class", ["LateJoinLayer"], indirect=True)
def test_a_stream_cancelled_before_its_join_lands_never_joins(layer_class: Any):
    """The other order: the client leaves before the join is done. The stream's
    ``finally`` leaves the group at once; a join still running after that (the first
    join, bounded since 2026-12-06, ran as a task of its own that the cancellation did
    not reach) would make the dead stream a member for the group's expiry, every later
    event copied to a queue nobody reads. The server's loop goes on running meanwhile."""
    site = MCPSite("confined-late-join")

    async def scenario() -> None:
        events = listener(site).events()
        starting = asyncio.ensure_future(events.__anext__())
        await asyncio.sleep(0.1)  # the join is under way, not done
        starting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starting
        await asyncio.sleep(0.6)  # the server's loop runs on, past when the join lands

    asyncio.run(scenario())

    assert layer_class.groups.get(fanout.group_name(site.name), {}) == {}


def test_a_layer_no_longer_configured_is_not_kept_alive(settings: Any):
    """Each ``CHANNEL_LAYERS`` change builds a new layer; the wrapper of the old one must
    not keep it (and its queues) alive."""
    channel_layers.backends.clear()
    old = channel_layers["default"]
    assert isinstance(fanout.channel_layer(), ConfinedLayer)
    gone = weakref.ref(old)
    del old
    channel_layers.backends.clear()
    try:
        gc.collect()
        assert gone() is None
    finally:
        channel_layers.backends.clear()


class SlowSendLayer(InMemoryChannelLayer):  # type: ignore[misc]
    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await asyncio.sleep(0.5)
        await super().group_send(group, message)


@pytest.mark.parametrize("layer_class", ["SlowSendLayer"], indirect=True)
def test_a_send_that_timed_out_is_withdrawn(layer_class: Any):
    """A publish that gave up waiting is logged as failed; it must not then be sent all
    the same, behind the caller's back."""
    confined = fanout.channel_layer()
    channel = asyncio.run(confined.new_channel())
    asyncio.run(confined.group_add("django_mcp.slow", channel))

    with pytest.raises(TimeoutError):
        confined.group_send_now("django_mcp.slow", {"type": "mcp.change"}, 0.1)
    time.sleep(1)

    assert channel not in layer_class.channels  # nothing was ever queued for it


class PublishingLayer(InMemoryChannelLayer):  # type: ignore[misc]
    """A layer whose own code publishes (on the layer's thread)."""

    async def new_channel(self, prefix: str = "specific.") -> str:
        name: str = await super().new_channel(prefix)
        if prefix == "specific.":
            fanout.publish(proto.TOOLS_LIST_CHANGED, site=MCPSite("confined-inside"))
        return name


@pytest.mark.parametrize("layer_class", ["PublishingLayer"], indirect=True)
def test_a_publish_on_the_layer_thread_is_queued_not_waited_for(
    layer_class: Any, caplog: pytest.LogCaptureFixture
):
    """Waiting on the layer's own thread for that thread's loop would block it until the
    publish timed out (10 s), and log a failure for a send that then happened."""

    async def scenario() -> str:
        name: str = await asyncio.wait_for(fanout.channel_layer().new_channel(), 5)
        return name

    assert asyncio.run(scenario()).startswith("specific.")
    assert "Could not publish" not in caplog.text


def test_at_interpreter_exit_the_layer_is_used_in_place(monkeypatch: pytest.MonkeyPatch):
    """At exit the layer's daemon thread no longer runs, while a stream left open is
    closed by the garbage collector and leaves its group: waiting for the thread would
    hold the exit up for a second per stream."""

    def no_thread(coroutine: Any) -> Any:
        coroutine.close()
        raise AssertionError("handed to the layer's thread at exit")

    monkeypatch.setattr(layer_module, "_submitted", no_thread)
    monkeypatch.setattr(layer_module, "_exiting", lambda: True)
    confined = fanout.channel_layer()

    async def leave() -> None:
        await confined.group_discard("django_mcp.exit", "specific.inmemory!x")

    asyncio.run(leave())
