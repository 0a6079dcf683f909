"""The channel layer as listen streams and publishers use it, safe across threads and loops.

Channels' in-memory layer (the default) keeps its channels and groups in plain dicts and
``asyncio`` queues without a lock: it expects one event loop. A process serving MCP uses it
from several threads: the ASGI server's loop, each WSGI listen stream's own loop
(:meth:`~django_mcp.listen.listener.Listener.sync_events`), and every thread that publishes
a change (a tool run in a stream's thread, a model save's ``on_commit``, a task worker).
Used that way,

- an event published from a thread other than the listener's reached it only at its next
  keep-alive (up to ``LISTEN_KEEPALIVE_SECONDS``): completing a future from a foreign
  thread does not wake the loop waiting on it;
- a publish racing a stream's start or end failed with "dictionary changed size during
  iteration", and was lost for every stream of the process;
- an event put into a queue that its receiver had just dropped was lost.

So an in-memory layer is confined to one thread: every operation runs on a private event
loop in a daemon thread (``mcp-channel-layer``), and callers wait for it with
``asyncio.wrap_future`` (async: the result wakes the caller's loop through
``call_soon_threadsafe``, as asyncio requires) or ``Future.result`` (sync). Other layers
(``channels_redis``) are used as they are: they are built for many loops, and a hop
through one thread would only cost time.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_loop_lock = threading.Lock()
#: Sends queued on the layer's loop by code running there (see ``group_send_now``).
_queued: set[asyncio.Future[Any]] = set()
#: The attribute of an in-memory layer that holds its wrapper: a cache keyed by the layer
#: would keep every layer ever configured (and its queues) alive through its wrapper.
_WRAPPER = "_django_mcp_confined"


def confined(layer: Any) -> Any:
    """``layer`` as listen streams and publishers must use it: an in-memory layer behind a
    :class:`ConfinedLayer` (one per layer object), any other layer as it is."""
    if layer is None or not _is_in_memory(layer):
        return layer
    wrapper = getattr(layer, _WRAPPER, None)
    if wrapper is None:
        wrapper = ConfinedLayer(layer)
        setattr(layer, _WRAPPER, wrapper)
    return wrapper


def _is_in_memory(layer: Any) -> bool:
    try:
        from channels.layers import InMemoryChannelLayer  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - channels is a dependency
        return False
    return isinstance(layer, InMemoryChannelLayer)


class ConfinedLayer:
    """An in-memory channel layer whose every operation runs on the layer thread's loop.

    It offers the part of the channel layer API the listen package uses, each method a
    coroutine the caller awaits on its own loop, plus :meth:`group_send_now` for sync
    code. Cancelling a pending :meth:`receive` cancels it on the layer's loop too.
    """

    def __init__(self, layer: Any) -> None:
        self.layer = layer

    @property
    def groups(self) -> dict[str, dict[str, float]]:
        """The wrapped layer's groups (read-only use: monitoring and tests)."""
        groups: dict[str, dict[str, float]] = self.layer.groups
        return groups

    async def new_channel(self) -> str:
        name: str = await _awaited(self.layer.new_channel())
        return name

    async def group_add(self, group: str, channel: str) -> None:
        await _awaited(self.layer.group_add(group, channel))

    async def group_discard(self, group: str, channel: str) -> None:
        await _awaited(self.layer.group_discard(group, channel))

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await _awaited(self.layer.group_send(group, message))

    async def receive(self, channel: str) -> dict[str, Any]:
        message: dict[str, Any] = await _awaited(self.layer.receive(channel))
        return message

    def group_send_now(self, group: str, message: dict[str, Any], timeout: float) -> None:
        """Send from any thread, running loop or not, and wait for it (``timeout``
        seconds at most; a send that timed out is withdrawn, so it is not sent after
        being reported as failed). On the layer's own thread (a layer's code publishing)
        it is queued on that loop instead: waiting there would wait for ever."""
        coroutine = self.layer.group_send(group, message)
        if threading.current_thread() is _thread:
            task = asyncio.ensure_future(coroutine)
            _queued.add(task)  # held until done: the loop keeps only a weak reference
            task.add_done_callback(_queued.discard)
            return
        future = _submitted(coroutine)
        try:
            future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise


async def _awaited(coroutine: Coroutine[Any, Any, T]) -> T:
    """``coroutine`` run on the layer thread's loop, awaited on the running loop.

    At interpreter exit, the layer's daemon thread no longer runs, while a stream left
    open is closed by the garbage collector (its ``finally`` leaves the group): the
    coroutine then runs here, as nothing else uses the layer any more."""
    if _exiting():
        return await coroutine
    return await asyncio.wrap_future(_submitted(coroutine))


def _exiting() -> bool:
    return sys.is_finalizing()


def _submitted(coroutine: Coroutine[Any, Any, T]) -> Future[T]:
    return asyncio.run_coroutine_threadsafe(coroutine, _layer_loop())


def _layer_loop() -> asyncio.AbstractEventLoop:
    """The layer thread's loop, started the first time it is needed.

    Once started it is read without the lock: a stream's generator finalized by the garbage
    collector (its ``finally`` leaves the group) may call this on a thread that is inside
    the lock already, and must not wait for it."""
    loop = _loop
    if loop is not None:
        return loop
    return _start_layer_loop()


def _start_layer_loop() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="mcp-channel-layer")
            thread.daemon = True
            thread.start()
            _loop, _thread = loop, thread
        return _loop


def _forget_layer_loop() -> None:
    """In a forked child: the parent's layer thread does not exist there."""
    global _loop, _thread, _loop_lock
    _loop, _thread, _loop_lock = None, None, threading.Lock()


os.register_at_fork(after_in_child=_forget_layer_loop)
