"""What ``report_progress`` sends: its arguments checked, and at most one notification per
``PROGRESS_INTERVAL``.

basic/utilities/progress.mdx: "Both parties SHOULD implement rate limiting to prevent
flooding". A tool that reports from a tight loop (``for i, row in enumerate(rows):
ctx.report_progress(i, len(rows))``) would otherwise send one SSE event per row; answered
buffered (under WSGI, or past ``MAX_LIVE_STREAMS``), every one of them waits in memory until
the reply; in a task, every message is a database write. So a report that comes sooner
than ``PROGRESS_INTERVAL`` after the last one sent is held, the newest held replacing the
one before (progress only rises: the newer one says more), and goes out with the next
report after the interval, or just before the reply. Nothing is held past the request.
"""

from __future__ import annotations

import math
import numbers
import time
from typing import Any, Generic, TypeVar

from django_mcp.conf import DEFAULTS, mcp_settings

T = TypeVar("T")


def progress_interval() -> float:
    """``PROGRESS_INTERVAL``; a value the checks refuse (a process that never ran them)
    means the default, so reports are never unpaced by accident."""
    value: Any = mcp_settings.PROGRESS_INTERVAL
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        value = DEFAULTS["PROGRESS_INTERVAL"]
    return float(value)


class Pacer(Generic[T]):
    """Lets an item through at most once per ``interval`` seconds and holds the newest of
    those that came sooner, for :meth:`take_held`. The first item always goes."""

    __slots__ = ("_held", "_interval", "_sent_at")

    def __init__(self, interval: float | None = None) -> None:
        self._interval = progress_interval() if interval is None else interval
        self._sent_at: float | None = None
        self._held: T | None = None

    def offer(self, item: T) -> T | None:
        """``item`` when it may go now (the held one, older, is dropped), else None."""
        now = time.monotonic()
        if self._sent_at is None or now - self._sent_at >= self._interval:
            self._sent_at, self._held = now, None
            return item
        self._held = item
        return None

    def take_held(self) -> T | None:
        """The newest item held back, once (the request is ending: send it now)."""
        held, self._held = self._held, None
        if held is not None:
            self._sent_at = time.monotonic()
        return held


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
