"""Change notifications across processes, through the Channels channel layer.

``notify_tools_changed()``, ``notify_prompts_changed()``, ``notify_resources_changed()``
and ``notify_resource_updated(uri)`` publish an event to the site's group on the channel
layer (``CHANNEL_LAYERS``: in-memory by default, ``channels_redis`` across processes).
Every open ``subscriptions/listen`` stream in any process receives it and forwards what
its filter asked for. Nothing about a subscription outlives its stream.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import AsyncGenerator, Iterator
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import async_to_sync

from django_mcp import sites
from django_mcp.conf import mcp_settings
from django_mcp.listen import shutdown
from django_mcp.protocol import sse
from django_mcp.protocol import subscriptions as proto

if TYPE_CHECKING:
    from django_mcp.sites import MCPSite

#: The list-changed notification announcing a change of each kind of declaration.
LIST_CHANGED: Final = {
    "tools": proto.TOOLS_LIST_CHANGED,
    "resources": proto.RESOURCES_LIST_CHANGED,
    "prompts": proto.PROMPTS_LIST_CHANGED,
}

logger = logging.getLogger("django_mcp")
EVENT_TYPE: Final = "mcp.change"
_PUBLISH_TIMEOUT: Final = 10.0  # seconds an event loop may wait for a publish
_GROUP_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def channel_layer() -> Any:
    """The configured channel layer, or None when Channels is not set up."""
    try:
        from channels.layers import get_channel_layer  # type: ignore[import-untyped]
    except ImportError:
        return None
    return get_channel_layer()


def group_name(site_name: str) -> str:
    return "django_mcp." + _GROUP_UNSAFE.sub("_", site_name)[:80]


def _site_name(site: MCPSite | None) -> str:
    return (site if site is not None else sites.site).name


async def apublish(method: str, uri: str | None = None, *, site: MCPSite | None = None) -> None:
    """Publish one change to every listener of ``site`` (async)."""
    layer = channel_layer()
    if layer is None:
        return
    await layer.group_send(
        group_name(_site_name(site)), {"type": EVENT_TYPE, "method": method, "uri": uri}
    )


def publish(method: str, uri: str | None = None, *, site: MCPSite | None = None) -> None:
    """Publish one change from sync code; failures are logged, never raised.

    Called where an event loop is running (an ``async def`` tool calling a ``notify_*``
    function, or changing the registry), ``async_to_sync`` cannot run: the change is then
    published from a helper thread, waited for, so it is sent before the caller goes on.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        _publish_now(method, uri, site)
        return
    helper = threading.Thread(
        target=_publish_now, args=(method, uri, site), name="mcp-publish", daemon=True
    )
    helper.start()
    helper.join(_PUBLISH_TIMEOUT)


def _publish_now(method: str, uri: str | None, site: MCPSite | None) -> None:
    try:
        async_to_sync(apublish)(method, uri, site=site)
    except Exception:  # a notification must never break the change that caused it
        logger.exception("Could not publish %s", method)


def announce_declarations_changed(
    sender: type[MCPSite], *, site: MCPSite, kind: str | None, **kwargs: Any
) -> None:
    """Receiver of :data:`~django_mcp.sites.declarations_changed` (connected by the app's
    ``ready``): once a site is serving, a registration change reaches every listener."""
    if site.serving and kind is not None:
        publish(LIST_CHANGED[kind], site=site)


def notify_tools_changed(*, site: MCPSite | None = None) -> None:
    publish(proto.TOOLS_LIST_CHANGED, site=site)


def notify_prompts_changed(*, site: MCPSite | None = None) -> None:
    publish(proto.PROMPTS_LIST_CHANGED, site=site)


def notify_resources_changed(*, site: MCPSite | None = None) -> None:
    publish(proto.RESOURCES_LIST_CHANGED, site=site)


def notify_resource_updated(uri: str, *, site: MCPSite | None = None) -> None:
    publish(proto.RESOURCE_UPDATED, uri, site=site)


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
