"""One ``subscriptions/listen`` stream (basic/utilities/subscriptions.mdx): the
acknowledgement first, then the changes its filter asked for, with keep-alives, until the
client leaves, the stream's lifetime ends or the server shuts down.

The events arrive through the site's group on the channel layer (:mod:`.fanout`), so a
change made in any process reaches a listener in every process.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator
from typing import TYPE_CHECKING, Any

from django_mcp.conf import mcp_settings
from django_mcp.listen import shutdown
from django_mcp.listen.fanout import channel_layer, group_name
from django_mcp.protocol import sse
from django_mcp.protocol import subscriptions as proto
from django_mcp.protocol.tasks import notification as task_notification

if TYPE_CHECKING:
    from django_mcp.sites import MCPSite


class Listener:
    """One ``subscriptions/listen`` stream: acknowledgement, filtered changes, keep-alives."""

    def __init__(
        self, site: MCPSite, subscription_id: Any, wanted: proto.SubscriptionFilter
    ) -> None:
        self.site = site
        self.subscription_id = subscription_id
        self.filter = wanted
        self.group = group_name(site.name)

    def acknowledgement(self) -> bytes:
        return sse.event(proto.acknowledgement(self.subscription_id, self.filter))

    def render(self, event: dict[str, Any]) -> bytes | None:
        method, uri = event.get("method"), event.get("uri")
        if not isinstance(method, str) or not self.filter.wants(method, uri):
            return None
        if method == proto.TASK_STATUS:
            return sse.event(task_notification(self.subscription_id, event.get("task") or {}))
        return sse.event(proto.change_notification(self.subscription_id, method, uri))

    async def events(self) -> AsyncGenerator[bytes, None]:
        """The stream under ASGI; the client closing it ends the loop (cancellation).

        A keep-alive comment goes out after every ``LISTEN_KEEPALIVE_SECONDS`` without a
        frame (events this filter drops do not count). The pending ``receive`` is never
        cancelled for a keep-alive: a channels_redis receive cancelled mid-way can lose a
        message it already popped, for this stream or another one of the process.
        """
        layer = channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(self.group, channel)
        keep_alive = float(mcp_settings.LISTEN_KEEPALIVE_SECONDS)
        deadline = _deadline()
        receiving: asyncio.Task[Any] | None = None
        stopping = shutdown.waiter()
        try:
            yield self.acknowledgement()
            last_frame = _now()
            while True:
                now = _now()
                if stopping.done() or (deadline is not None and now >= deadline):
                    yield sse.event(proto.closing_result(self.subscription_id))
                    return
                wake = last_frame + keep_alive
                if deadline is not None:
                    wake = min(wake, deadline)
                if receiving is None:
                    receiving = asyncio.ensure_future(layer.receive(channel))
                done, _ = await asyncio.wait(
                    {receiving, stopping},
                    timeout=max(0.0, wake - now),
                    return_when=asyncio.FIRST_COMPLETED,
                )
                if receiving not in done:
                    if _now() >= last_frame + keep_alive:
                        yield sse.KEEP_ALIVE
                        last_frame = _now()
                    continue
                event, receiving = receiving.result(), None
                frame = self.render(event)
                if frame is not None:
                    yield frame
                    last_frame = _now()
        finally:
            stopping.cancel()
            if receiving is not None:
                await _abandon(receiving)
            await layer.group_discard(self.group, channel)

    def sync_events(self) -> Iterator[bytes]:
        """The same stream for WSGI servers, which hold one thread per open stream.

        The generator runs on one event loop of its own for its whole life: the channel
        layer's queues and connections belong to the loop that first used them.
        """
        loop = asyncio.new_event_loop()
        agen = self.events()
        try:
            while True:
                try:
                    yield loop.run_until_complete(agen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            try:
                loop.run_until_complete(agen.aclose())
            finally:
                loop.close()


async def _abandon(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait for it to finish, without raising what it raised."""
    task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: never logged as "exception was never retrieved"


def _now() -> float:
    import time

    return time.monotonic()


def _deadline() -> float | None:
    seconds = mcp_settings.LISTEN_MAX_SECONDS
    return None if seconds is None else _now() + float(seconds)
