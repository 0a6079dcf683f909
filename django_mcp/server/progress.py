"""What ``report_progress`` sends: its arguments checked, and at most one notification per
``PROGRESS_INTERVAL``.

basic/utilities/progress.mdx: "Both parties SHOULD implement rate limiting to prevent
flooding". A tool that reports from a tight loop (``for i, row in enumerate(rows):
ctx.report_progress(i, len(rows))``) would otherwise send one SSE event per row; answered
buffered (under WSGI, or past ``MAX_LIVE_STREAMS``), every one of them waits in memory until
the reply; in a task, every message is a database write. So a report that comes sooner
than ``PROGRESS_INTERVAL`` after the last one sent is held, the newest held replacing the
one before (progress only rises: the newer one says more), and sent once the interval has
passed (by one shared thread, :class:`_Flusher`, so that a quick report followed by an
hour of quiet work does not leave the client on the one before), or with the next report,
or just before the reply, whichever comes first. Nothing is sent after the reply.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import numbers
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from django_mcp.conf import DEFAULTS, mcp_settings

T = TypeVar("T")
logger = logging.getLogger("django_mcp")


def progress_interval() -> float:
    """``PROGRESS_INTERVAL``; a value the checks refuse (a process that never ran them)
    means the default, so reports are never unpaced by accident."""
    value: Any = mcp_settings.PROGRESS_INTERVAL
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        value = DEFAULTS["PROGRESS_INTERVAL"]
    return float(value)


class Pacer(Generic[T]):
    """Hands items to ``send`` at most once per ``interval`` seconds, the first at once,
    and holds the newest of those that come sooner. A held item goes when the interval
    has passed (``trailing``: the shared flushing thread sends it; otherwise whoever calls
    :meth:`flush`, a task's heartbeat), with the next item after the interval, or at
    :meth:`close`. ``send`` runs under the pacer's lock, whichever thread calls it, so
    items go out in the order they were offered and never after :meth:`close`."""

    __slots__ = (
        "__weakref__",
        "_closed",
        "_held",
        "_interval",
        "_lock",
        "_send",
        "_sent_at",
        "_trailing",
    )

    def __init__(
        self, send: Callable[[T], None], interval: float | None = None, *, trailing: bool = True
    ) -> None:
        self._send = send
        self._interval = progress_interval() if interval is None else interval
        self._trailing = trailing
        self._lock = threading.Lock()
        self._sent_at: float | None = None
        self._held: T | None = None
        self._closed = False

    def offer(self, item: T) -> None:
        """Send ``item`` now if the interval has passed since the last one sent, else hold
        it (in place of an older held one)."""
        with self._lock:
            if self._closed:
                return
            now = time.monotonic()
            if self._sent_at is None or now - self._sent_at >= self._interval:
                self._sent_at, self._held = now, None
                self._send(item)
                return
            first_held = self._held is None
            self._held = item
            due = self._sent_at + self._interval
        if first_held and self._trailing:
            _flusher.schedule(due, self)

    def flush(self) -> None:
        """Send the held item now, if there is one (the interval need not have passed)."""
        with self._lock:
            if not self._closed and self._held is not None:
                self._sent_at, held, self._held = time.monotonic(), self._held, None
                self._send(held)

    def flush_due(self) -> None:
        """Send the held item if its interval has passed (the flushing thread's call; an
        item held after a later send has its own turn)."""
        with self._lock:
            if self._closed or self._held is None or self._sent_at is None:
                return
            if time.monotonic() - self._sent_at < self._interval:
                return
            self._sent_at, held, self._held = time.monotonic(), self._held, None
            self._send(held)

    def close(self, *, send_held: bool) -> None:
        """Nothing more goes out; the held item first when ``send_held``."""
        with self._lock:
            held, self._held, self._closed = self._held, None, True
            if send_held and held is not None:
                self._send(held)


class _Flusher:
    """One daemon thread that sends each pacer's held item when its interval has passed:
    a heap of (when, pacer), the pacers held weakly (a request that ended is not kept)."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, weakref.ref[Pacer[Any]]]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def schedule(self, when: float, pacer: Pacer[Any]) -> None:
        with self._wake:
            heapq.heappush(self._due, (when, next(self._order), weakref.ref(pacer)))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="mcp-progress-flush", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            pacer = self._next()
            if pacer is None:
                continue
            try:
                pacer.flush_due()
            except Exception:  # a transport's failure must not stop every later flush
                logger.exception("django-mcp could not send a held progress report")

    def _next(self) -> Pacer[Any] | None:
        """Wait for the earliest due pacer and take it off the heap (None: it is gone)."""
        with self._wake:
            while True:
                if not self._due:
                    self._wake.wait()
                    continue
                delay = self._due[0][0] - time.monotonic()
                if delay <= 0:
                    return heapq.heappop(self._due)[2]()
                self._wake.wait(delay)


_flusher = _Flusher()


def _forget_flusher() -> None:
    """In a forked child: the parent's thread does not run here, and its lock may be held."""
    global _flusher
    _flusher = _Flusher()


os.register_at_fork(after_in_child=_forget_flusher)


def checked_progress(
    progress: Any, total: Any = None, message: Any = None
) -> tuple[float, float | None, str | None]:
    """``report_progress``'s arguments as ``notifications/progress`` carries them
    (basic/utilities/progress.mdx: ``progress`` and ``total`` are numbers, ``message`` a
    string); a tool's mistake raises in the tool, with a message that says which.

    NaN was sent as ``null``, which no client can read, and then let every later value
    through: nothing compares above or below it, so "progress must increase" stopped
    holding. Infinity, a bool or a string fared no better. An integer stays an integer; any
    other real number (a ``Fraction``) becomes a float, which JSON can write.
    """
    return (
        _progress_number("progress", progress),
        None if total is None else _progress_number("total", total),
        _progress_message(message),
    )


def _progress_number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"report_progress: {name} must be a number, not {type(value).__name__}")
    if isinstance(value, int):  # always finite; math.isfinite overflows past a float's range
        return value
    if not math.isfinite(value):
        raise ValueError(f"report_progress: {name} must be finite, not {value!r}")
    return float(value)


def _progress_message(message: Any) -> str | None:
    if message is not None and not isinstance(message, str):
        raise TypeError(f"report_progress: message must be a string, not {type(message).__name__}")
    return message
