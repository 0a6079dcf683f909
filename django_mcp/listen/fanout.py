"""Change notifications across processes, through the Channels channel layer.

``notify_tools_changed()``, ``notify_prompts_changed()``, ``notify_resources_changed()``
and ``notify_resource_updated(uri)`` publish an event to the site's group on the channel
layer (``CHANNEL_LAYERS``: with none configured nothing is published and listen is not
offered; the in-memory layer reaches one process, ``channels_redis`` every process).
Every open ``subscriptions/listen`` stream in any process receives it and forwards what
its filter asked for. Nothing about a subscription outlives its stream.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import async_to_sync

from django_mcp import sites
from django_mcp.listen.layer import ConfinedLayer, confined
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
    """The configured channel layer, or None when Channels is not set up; an in-memory
    layer comes confined to one thread (:mod:`.layer`), as every thread may use it."""
    try:
        from channels.layers import get_channel_layer  # type: ignore[import-untyped]
    except ImportError:
        return None
    return confined(get_channel_layer())


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

    The in-memory layer runs on a thread of its own (:mod:`.layer`), which is waited for.
    With another layer, called where an event loop is running (an ``async def`` tool
    calling a ``notify_*`` function, or changing the registry), ``async_to_sync`` cannot
    run: the change is then published from a helper thread, waited for, so it is sent
    before the caller goes on.
    """
    _send(_site_name(site), {"type": EVENT_TYPE, "method": method, "uri": uri})


def publish_task(site_name: str, task_id: str, task: dict[str, Any]) -> None:
    """Publish a task's new state (``notifications/tasks``) to the listeners of its site;
    each stream forwards it only if it subscribed to ``task_id``."""
    event = {"type": EVENT_TYPE, "method": proto.TASK_STATUS, "uri": task_id, "task": task}
    _send(site_name, event)


def _send(site_name: str, event: dict[str, Any]) -> None:
    layer = channel_layer()
    if layer is None:
        return
    # The confined in-memory layer runs on its own thread's loop: it needs no helper.
    if isinstance(layer, ConfinedLayer) or not _loop_running():
        _publish_now(layer, site_name, event)
        return
    helper = threading.Thread(
        target=_publish_now, args=(layer, site_name, event), name="mcp-publish", daemon=True
    )
    helper.start()
    helper.join(_PUBLISH_TIMEOUT)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _publish_now(layer: Any, site_name: str, event: dict[str, Any]) -> None:
    try:
        if isinstance(layer, ConfinedLayer):
            layer.group_send_now(group_name(site_name), event, _PUBLISH_TIMEOUT)
        else:
            async_to_sync(layer.group_send)(group_name(site_name), event)
    except Exception:  # a notification must never break the change that caused it
        logger.exception("Could not publish %s", event.get("method"))


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


def notify_row_updated(uri: str, row: dict[str, Any], *, site: MCPSite | None = None) -> None:
    """``notify_resource_updated(uri)`` for the change of one row, which the event names
    (``{"model": label, "pk": pk}``) so that each listener is asked whether it may see
    *that* row (the template's ``row_visible``), not any row its URI could name. The
    row stays on the channel layer: the notification carries only the URI."""
    event = {"type": EVENT_TYPE, "method": proto.RESOURCE_UPDATED, "uri": uri, "row": row}
    _send(_site_name(site), event)
