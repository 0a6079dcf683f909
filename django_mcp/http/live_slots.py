"""How many live-stream handler threads run in this process: at most ``MAX_LIVE_STREAMS``.

A live progress stream (:mod:`django_mcp.http.streaming`) runs its handler in a thread of
its own, which may hold database connections; a client could otherwise open as many as it
likes. A request that finds every slot taken is answered buffered, never refused. One
caller (counted as listen streams are: :func:`~django_mcp.listen.limits.caller_key`) holds
at most ``MAX_LIVE_STREAMS_PER_CALLER`` of them, so that one client's slow streamed calls
leave the others their live progress. Apart from the stream so that the bound is one small
thing with one job, reset in a forked child (the parent's threads are not the child's).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter

from django_mcp.conf import mcp_settings

logger = logging.getLogger("django_mcp")


def max_live_streams() -> int:
    """``MAX_LIVE_STREAMS``; a value the checks refuse (a process that never ran them)
    means the default: the threads are never unbounded."""
    return int(mcp_settings.number("MAX_LIVE_STREAMS", at_least=0, integer=True))


def max_live_streams_per_caller() -> int:
    """``MAX_LIVE_STREAMS_PER_CALLER``; a value the checks refuse means the default."""
    return int(mcp_settings.number("MAX_LIVE_STREAMS_PER_CALLER", at_least=1, integer=True))


class LiveSlots:
    """How many live-stream threads run now in this process, at most
    :func:`max_live_streams`, and how many of them each caller holds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._by_caller: Counter[str] = Counter()
        self._warned = False

    @property
    def count(self) -> int:
        return self._count

    def take(self, caller: str) -> bool:
        """One more thread for ``caller`` may start (True, counted), or a limit is reached
        (False): the process's, or the caller's share."""
        limit = max_live_streams()
        share = max_live_streams_per_caller()
        with self._lock:
            if self._count < limit:
                if self._by_caller[caller] >= share:
                    return False  # this caller's own streams wait; nobody else's do
                self._count += 1
                self._by_caller[caller] += 1
                return True
            warn, self._warned = not self._warned and limit > 0, True
        if warn:  # once until every live stream has ended, not once per request
            logger.warning(
                "django-mcp runs MAX_LIVE_STREAMS (%d) live progress streams; further "
                "streamed requests are answered with their notifications buffered",
                limit,
            )
        return False

    def give(self, caller: str) -> None:
        with self._lock:
            self._count -= 1
            self._by_caller[caller] -= 1
            if self._by_caller[caller] <= 0:
                del self._by_caller[caller]
            if self._count <= 0:
                self._warned = False


_slots = LiveSlots()


def _forget_slots() -> None:
    """In a forked child: none of the parent's stream threads run here."""
    global _slots
    _slots = LiveSlots()


os.register_at_fork(after_in_child=_forget_slots)


def take_slot(caller: str) -> bool:
    """Count one more live-stream thread of ``caller`` (True), or False when
    ``MAX_LIVE_STREAMS`` run, or the caller's ``MAX_LIVE_STREAMS_PER_CALLER``."""
    return _slots.take(caller)


def give_slot(caller: str) -> None:
    """A live-stream thread of ``caller`` ended, however it ended: its slot is free again."""
    _slots.give(caller)


def live_streams() -> int:
    """Live-stream handler threads running now in this process (for tests and monitoring)."""
    return _slots.count
