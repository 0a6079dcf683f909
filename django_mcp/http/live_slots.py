"""How many live-stream handler threads run in this process: at most ``MAX_LIVE_STREAMS``.

A live progress stream (:mod:`django_mcp.http.streaming`) runs its handler in a thread of
its own, which may hold database connections; a client could otherwise open as many as it
likes. A request that finds every slot taken is answered buffered, never refused. Apart
from the stream so that the bound is one small thing with one job, reset in a forked child
(the parent's threads are not the child's).
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from django_mcp.conf import DEFAULTS, mcp_settings

logger = logging.getLogger("django_mcp")


def max_live_streams() -> int:
    """``MAX_LIVE_STREAMS``; a value the checks refuse (a process that never ran them)
    means the default: the threads are never unbounded."""
    value: Any = mcp_settings.MAX_LIVE_STREAMS
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        value = DEFAULTS["MAX_LIVE_STREAMS"]
    return int(value)


class LiveSlots:
    """How many live-stream threads run now in this process, at most
    :func:`max_live_streams`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._warned = False

    @property
    def count(self) -> int:
        return self._count

    def take(self) -> bool:
        """One more thread may start (True, counted), or the limit is reached (False)."""
        limit = max_live_streams()
        with self._lock:
            if self._count < limit:
                self._count += 1
                return True
            warn, self._warned = not self._warned and limit > 0, True
        if warn:  # once until every live stream has ended, not once per request
            logger.warning(
                "django-mcp runs MAX_LIVE_STREAMS (%d) live progress streams; further "
                "streamed requests are answered with their notifications buffered",
                limit,
            )
        return False

    def give(self) -> None:
        with self._lock:
            self._count -= 1
            if self._count <= 0:
                self._warned = False


_slots = LiveSlots()


def _forget_slots() -> None:
    """In a forked child: none of the parent's stream threads run here."""
    global _slots
    _slots = LiveSlots()


os.register_at_fork(after_in_child=_forget_slots)


def take_slot() -> bool:
    """Count one more live-stream thread (True), or False when ``MAX_LIVE_STREAMS`` run."""
    return _slots.take()


def give_slot() -> None:
    """A live-stream thread ended, however it ended: its slot is free again."""
    _slots.give()


def live_streams() -> int:
    """Live-stream handler threads running now in this process (for tests and monitoring)."""
    return _slots.count
