"""A clean end for open ``subscriptions/listen`` streams when the server shuts down.

basic/patterns/subscriptions.mdx: when the server ends a subscription it SHOULD first send
the JSON-RPC response to the listen request, then close; a close without it tells the client
the stream dropped unexpectedly. Django's ASGI handler hears nothing of shutdown, so the first
listen stream chains a handler onto SIGTERM and SIGINT (in the main thread, where the ASGI
server's event loop runs): it wakes every open stream, which sends its closing result, and
hands the signal on to the server's own handler a moment later, once those results are out.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, Final

#: Seconds open streams get to send their closing result before the server's own handler
#: runs (only when streams are open).
GRACE_SECONDS: Final = 0.25
SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)

_lock = threading.Lock()
_installed = False
_waiters: set[asyncio.Future[None]] = set()
_stopping = False


def _forget_waiters() -> None:
    """In a forked child: the parent's streams wait on loops that do not run here, and
    its lock may have been held by a thread that does not exist here."""
    global _lock, _waiters
    _lock, _waiters = threading.Lock(), set()


os.register_at_fork(after_in_child=_forget_waiters)


def stopping() -> bool:
    """Whether a shutdown signal has been received."""
    return _stopping


def waiter() -> asyncio.Future[None]:
    """A future of the running loop that completes when shutdown starts; cancel it after."""
    install()
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    if _stopping:
        future.set_result(None)
    else:
        with _lock:
            _waiters.add(future)
        future.add_done_callback(_forget)
    return future


def _forget(future: asyncio.Future[None]) -> None:
    with _lock:
        _waiters.discard(future)


def install() -> None:
    """Chain the shutdown handler onto SIGTERM and SIGINT, once, from the main thread."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    _installed = True
    for number in SIGNALS:
        previous = signal.getsignal(number)
        signal.signal(number, _handler(previous))


def _handler(previous: Any) -> Callable[[int, FrameType | None], None]:
    def handle(number: int, frame: FrameType | None) -> None:
        global _stopping
        _stopping = True
        # Never the lock: a signal handler runs in the main thread between two bytecodes,
        # perhaps while that very thread holds it (waiter, _forget), and would wait for
        # ever. tuple() copies the set in one step no other thread can interleave with.
        waiting = [future for future in tuple(_waiters) if future.get_loop().is_running()]
        for future in waiting:
            future.get_loop().call_soon_threadsafe(_finish, future)
        if waiting:  # let the open streams send their closing result first
            # call_later is not safe here (this may interrupt the loop's own use of its
            # timer heap); call_soon_threadsafe is what asyncio's signal handling uses.
            loop = waiting[0].get_loop()
            loop.call_soon_threadsafe(
                loop.call_later, GRACE_SECONDS, _pass_on, previous, number, frame
            )
        else:
            _pass_on(previous, number, frame)

    return handle


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _pass_on(previous: Any, number: int, frame: FrameType | None) -> None:
    """Run the handler that was there before ours, as if ours had never been installed."""
    if callable(previous):
        previous(number, frame)
    elif previous == signal.SIG_DFL:
        signal.signal(number, signal.SIG_DFL)
        signal.raise_signal(number)
