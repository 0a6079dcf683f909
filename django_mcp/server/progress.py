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

from django_mcp.conf import mcp_settings

T = TypeVar("T")
logger = logging.getLogger("django_mcp")


def progress_interval() -> float:
    """``PROGRESS_INTERVAL``; a value the checks refuse (a process that never ran them)
    means the default, so reports are never unpaced by accident."""
    return float(mcp_settings.number("PROGRESS_INTERVAL", at_least=0))


class Pacer(Generic[T]):
    """Hands items to ``send`` at most once per ``interval`` seconds, the first at once,
    and holds the newest of those that come sooner. A held item goes when the interval
    has passed (``trailing``: the shared flushing thread sends it; otherwise whoever calls
    :meth:`flush`, a task's heartbeat), with the next item after the interval, or at
    :meth:`close`; nothing goes after :meth:`close`.

    One thread at a time sends (the *sender*); ``send`` runs outside the pacer's lock, so
    a thread offering an item never waits for another thread's send: a task's heartbeat
    storing a held message waits on the database, perhaps on a row lock of the tool's own
    transaction, and a tool that then reported again waited for the heartbeat, which
    waited for the tool. An item offered while another thread sends is held, and that
    sender sends it after its own once its interval has passed. Items are taken newest
    first, one sender at a time, so what goes out keeps the order it was offered in."""

    __slots__ = (
        "__weakref__",
        "_closed",
        "_held",
        "_interval",
        "_lock",
        "_scheduled",
        "_send",
        "_sending",
        "_sent_at",
        "_trailing",
    )

    def __init__(
        self, send: Callable[[T], None], interval: float | None = None, *, trailing: bool = True
    ) -> None:
        self._send = send
        self._interval = progress_interval() if interval is None else interval
        self._trailing = trailing
        self._lock = threading.Condition()
        self._sent_at: float | None = None
        self._held: T | None = None
        self._sending = False
        self._scheduled = False
        self._closed = False

    def offer(self, item: T) -> None:
        """Send ``item`` now if the interval has passed since the last one sent, else hold
        it (in place of an older held one)."""
        if self.hold(item):
            self.drain()

    def hold(self, item: T) -> bool:
        """The first half of :meth:`offer`: hold ``item``; True when the caller became the
        sender and must call :meth:`drain` (outside any lock of its own)."""
        with self._lock:
            if self._closed:
                return False
            self._held = item
            return not self._sending and self._take_sender()

    def drain(self) -> None:
        """The second half of :meth:`offer`, for the thread :meth:`hold` made the sender."""
        self._drain(force=False)

    def flush(self) -> None:
        """Send the held item now, if there is one (the interval need not have passed),
        after the send in progress, if any (callers are a heartbeat and the task's end,
        never an offering thread)."""
        with self._lock:
            while self._sending:  # flush() is no offer: it may wait for a send
                self._lock.wait()
            if self._closed or self._held is None:
                return
            self._sending = True
        self._drain(force=True)

    def flush_due(self) -> None:
        """The flushing thread's turn: send the held item if its interval has passed."""
        with self._lock:
            self._scheduled = False
            if self._closed or self._held is None or self._sending:
                return
            if not self._take_sender():
                return
        self._drain(force=False)

    def close(self, *, send_held: bool) -> None:
        """Nothing more goes out; the held item first when ``send_held`` (after the send
        in progress, if any, so that it is the last)."""
        with self._lock:
            self._closed = True
            while self._sending:
                self._lock.wait()
            held, self._held = self._held, None
        if send_held and held is not None:
            self._send(held)

    def _take_sender(self) -> bool:
        """With the lock held and an item held: become the sender when it may go now;
        otherwise have the flushing thread come back when it may (``trailing``)."""
        now = time.monotonic()
        if self._sent_at is None or now - self._sent_at >= self._interval:
            self._sending = True
            return True
        self._schedule()
        return False

    def _drain(self, *, force: bool) -> None:
        """As the sender: send the held item, then any offered meanwhile whose interval has
        passed. The role is handed back in the same critical section that finds nothing
        (more) to send, so an offer can never be held with nobody to send it; an item whose
        send failed is held again (unless a newer one came) and its flush scheduled."""
        item: T | None = None
        sending = True  # this thread is the sender until it hands the role back
        try:
            while True:
                with self._lock:
                    item = self._held
                    if item is None or self._closed:
                        sending = self._release()
                        return
                    sent_at = self._sent_at
                    if (
                        not force
                        and sent_at is not None
                        and time.monotonic() < sent_at + self._interval
                    ):
                        self._schedule()
                        sending = self._release()
                        return
                    self._held, self._sent_at, force = None, time.monotonic(), False
                self._send(item)
                item = None
        except BaseException:
            with self._lock:
                if self._held is None and item is not None:
                    self._held = item
                if sending:
                    if self._held is not None and not self._closed:
                        self._schedule()
                    self._release()
            raise

    def _schedule(self) -> None:
        """With the lock held and an item held: have the flushing thread come back at its due."""
        if self._trailing and not self._scheduled and self._sent_at is not None:
            self._scheduled = _flusher.schedule(self._sent_at + self._interval, self)

    def _release(self) -> bool:
        """With the lock held: hand the sender role back (False: no longer the sender)."""
        self._sending = False
        self._lock.notify_all()
        return False


class _Flusher:
    """One daemon thread that sends each pacer's held item when its interval has passed:
    a heap of (when, pacer), the pacers held weakly (a request that ended is not kept)."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, weakref.ref[Pacer[Any]]]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._warned = False

    def schedule(self, when: float, pacer: Pacer[Any]) -> bool:
        """Have ``pacer.flush_due`` called at ``when``; False when no thread could be
        started for it (the held item then goes with the next report, or at close)."""
        with self._wake:
            if self._thread is None or not self._thread.is_alive():
                thread = threading.Thread(target=self._run, name="mcp-progress-flush", daemon=True)
                try:
                    thread.start()
                except RuntimeError:  # "can't start new thread": never the tool's problem
                    if not self._warned:  # once: a tight reporting loop asks again and again
                        self._warned = True
                        logger.warning("django-mcp could not start its progress thread")
                    return False
                self._thread = thread
            heapq.heappush(self._due, (when, next(self._order), weakref.ref(pacer)))
            self._wake.notify()
        return True

    def _run(self) -> None:
        while True:
            self._flush(self._next())

    @staticmethod
    def _flush(pacer: Pacer[Any] | None) -> None:
        """Flush one pacer. A function of its own, so that no frame keeps the pacer (and
        its request) alive while the thread waits for the next one."""
        if pacer is None:
            return
        try:
            pacer.flush_due()
        except BaseException:
            # A transport's failure must not stop every later flush, not even one that is
            # no Exception: a send bridged to an event loop that was shutting down raises
            # CancelledError, and this thread ending left every pacer on the heap waiting
            # (the failed item too: it is scheduled again from this very thread). No signal
            # reaches a thread other than the main one, so nothing here is an interrupt.
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
