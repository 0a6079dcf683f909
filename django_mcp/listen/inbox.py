"""A listen stream's inbox: the channel layer read as fast as events come, whatever the
stream is doing meanwhile.

A channel layer holds at most its ``capacity`` of events waiting for one channel (100 by
default, in-memory and ``channels_redis`` alike) and drops the next ones without a word.
A stream checks every ``notifications/resources/updated`` against its caller in a worker
thread (a permission may query the database), so a burst of watched saves outran it: 300
updates in a row reached a stream as about 200. The :class:`Inbox` keeps one ``receive``
pending at all times, in a task of its own, and queues what arrives for the stream, which
takes it at its own pace:

- Events already waiting that say the same thing again (the same method, URI and row) are
  one event, the newer one (a task's newer state replaces its older one in place).
- At most :data:`MAX_PENDING_EVENTS` distinct events wait. Past that the stream cannot
  catch up in any useful time; the inbox then says so ahead of everything it holds, and
  the stream ends as dropped (no closing result), which tells the client to reconnect and
  read again, instead of a silent gap.
- A ``receive`` that fails ends the pump after handing the failure over; the stream
  recovers (joins its group again) and :meth:`Inbox.restart` starts the pump anew.

The pending ``receive`` is cancelled only when the stream ends, as before: a
``channels_redis`` receive cancelled mid-way can lose a message it already popped.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final, TypeVar

T = TypeVar("T")

#: The most distinct events a stream may have waiting; one more ends it as dropped.
MAX_PENDING_EVENTS: Final = 1000
#: How long a stream's end waits for its cancelled ``receive`` (twice at most).
CLOSE_WAIT_SECONDS: Final = 0.5


@dataclass(frozen=True, slots=True)
class Received:
    """What the stream takes from its inbox: an event, a ``receive`` that failed after
    ``waited`` seconds, or ``overflowed`` (the stream fell too far behind)."""

    event: dict[str, Any] | None = None
    failure: BaseException | None = None
    waited: float = 0.0
    overflowed: bool = False


OVERFLOWED: Final = Received(overflowed=True)


class Inbox:
    """The events of one channel, received by a task of their own and queued."""

    def __init__(self, layer: Any, channel: str) -> None:
        self._layer = layer
        self._channel = channel
        self._pending: OrderedDict[str, Received] = OrderedDict()
        self._ready = asyncio.Event()
        self._pump: asyncio.Task[None] | None = None
        self._receiving: asyncio.Task[Any] | None = None
        self._overflowed = False
        self._unkeyed = itertools.count()

    def restart(self) -> None:
        """Receive (again): at the stream's start, and after it recovered from a failure."""
        if self._pump is None or self._pump.done():
            self._pump = asyncio.ensure_future(self._run())

    async def get(self) -> Received:
        """The next thing the stream must handle, waiting for one (cancellable at no loss:
        nothing is taken off the queue until it is returned)."""
        while True:
            if self._overflowed:
                return OVERFLOWED
            if self._pending:
                return self._pending.popitem(last=False)[1]
            self._ready.clear()
            await self._ready.wait()

    async def close(self) -> None:
        """Stop receiving (the stream ended): the pending ``receive`` is cancelled, and
        waited for a little only: a ``channels_redis`` receive cancelled in its blocking
        pop after Redis restarted took seconds, or a second cancellation, to end, and the
        stream's end (its thread, under WSGI) must not wait on it."""
        pump, self._pump = self._pump, None
        if pump is not None:
            await abandon(pump)
        receiving, self._receiving = self._receiving, None
        for _ in range(2):
            if receiving is None or receiving.done():
                break
            receiving.cancel()
            await asyncio.wait({receiving}, timeout=CLOSE_WAIT_SECONDS)
        if receiving is not None and receiving.done() and not receiving.cancelled():
            receiving.exception()  # retrieved: never "exception was never retrieved"

    async def _run(self) -> None:
        while True:
            started = time.monotonic()
            # A task of its own, shielded from the pump's cancellation until close(): the
            # receive is not cancelled for anything but the stream's end.
            self._receiving = receiving = asyncio.ensure_future(self._layer.receive(self._channel))
            await asyncio.wait({receiving})
            self._receiving = None
            # Cancelled here only by the layer itself: close() cancels the pump first.
            failure = failure_of(receiving, "receive")
            if failure is not None:
                self._hand_over(None, Received(failure=failure, waited=_since(started)))
                return
            event = receiving.result()
            self._hand_over(_key(event), Received(event=event))

    def _hand_over(self, key: str | None, item: Received) -> None:
        """Queue ``item`` (under ``key``, replacing an equal event still waiting; without
        one, a failure say, under a key of its own), or note the overflow."""
        pending = self._pending
        if key is not None and key in pending:
            pending[key] = item  # the newer one, in the older one's place
        elif len(pending) >= MAX_PENDING_EVENTS:
            self._overflowed = True
        else:
            pending[key if key is not None else f"#{next(self._unkeyed)}"] = item
        self._ready.set()


def _key(event: Any) -> str | None:
    """What makes two events say the same thing: method, URI and row (a task's state is
    not part of it, so its newer state replaces the older). None: not comparable."""
    if not isinstance(event, dict):
        return None
    try:
        return json.dumps([event.get("method"), event.get("uri"), event.get("row")], default=str)
    except (TypeError, ValueError):
        return None


def _since(started: float) -> float:
    return time.monotonic() - started


async def abandon(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait for it to finish, without raising what it raised."""
    task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: never logged as "exception was never retrieved"


def failure_of(task: asyncio.Future[Any], what: str) -> BaseException | None:
    """Why a finished layer call (``what``: receive, join) failed, or None; one the layer
    cancelled itself is a failure too, not the stream's cancellation."""
    if task.cancelled():
        return asyncio.CancelledError(f"the channel layer cancelled its {what}")
    return task.exception()


def is_timeout(failure: BaseException) -> bool:
    """Python's ``TimeoutError``, or a layer's own of that name (redis-py's is not one)."""
    return isinstance(failure, TimeoutError) or type(failure).__name__ == "TimeoutError"


def iterated(stream: AsyncGenerator[T, None]) -> Iterator[T]:
    """``stream`` for sync code (WSGI, stdio): run on an event loop of its own, in a thread
    of its own for the stream's whole life, so its inbox keeps reading the layer while the
    caller writes a frame (to a slow client, say), not only while it waits for the next."""
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=_run, args=(loop,), name="mcp-listen-stream", daemon=True)
    runner.start()
    try:
        while True:
            frame = _outcome(asyncio.run_coroutine_threadsafe(_caught(anext(stream)), loop))
            if frame is _ENDED:
                return
            yield frame
    finally:
        try:
            _outcome(asyncio.run_coroutine_threadsafe(_caught(stream.aclose()), loop))
        finally:
            asyncio.run_coroutine_threadsafe(_wind_down(), loop)


#: How long a sync stream's loop, once the stream ended, waits in its own thread for the
#: tasks still running on it (a cancelled ``receive`` that :meth:`Inbox.close` stopped
#: waiting for) before it closes.
WIND_DOWN_SECONDS: Final = 30.0


def _run(loop: asyncio.AbstractEventLoop) -> None:
    """The stream's loop, closed in its own thread once :func:`_wind_down` stops it."""
    try:
        loop.run_forever()
    finally:
        loop.close()


async def _wind_down() -> None:
    """Let the tasks still on the loop finish, cancelled once more, then stop it: closed
    at once, a pending ``receive`` (channels_redis's blocking pop can take seconds to
    end) was destroyed as pending and its Redis connection never cleaned up. In the
    loop's thread, so the stream's caller (a WSGI worker's thread) does not wait."""
    current = asyncio.current_task()
    left = {task for task in asyncio.all_tasks() if task is not current}
    for task in left:
        task.cancel()
    if left:
        await asyncio.wait(left, timeout=WIND_DOWN_SECONDS)
    asyncio.get_running_loop().stop()


_ENDED: Final[Any] = object()


async def _caught(step: Awaitable[Any]) -> tuple[Any, BaseException | None]:
    """What ``step`` returns or raises, ``SystemExit`` too: raised in a task, that one
    would stop the loop's thread, and the stream's caller would wait for ever."""
    try:
        return await step, None
    except StopAsyncIteration:
        return _ENDED, None
    except (SystemExit, KeyboardInterrupt) as exc:
        return None, exc


def _outcome(future: Future[tuple[Any, BaseException | None]]) -> Any:
    value, error = future.result()
    if error is not None:
        raise error
    return value
