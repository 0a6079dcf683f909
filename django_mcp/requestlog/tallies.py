"""The summaries' arithmetic: a flush's records added up per hour and key, in the writer
thread, and hours summed into days (:mod:`.summaries` writes them; why they exist is said
there). Pure Python over the records' plain tuples, no database access.
"""

from __future__ import annotations

import datetime
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from django_mcp.requestlog import histogram
from django_mcp.requestlog.models import LogSummary, column_length
from django_mcp.requestlog.records import FIELD_INDEX, Row
from django_mcp.requestlog.sanitise import clean_text

if TYPE_CHECKING:
    from collections.abc import Iterable

#: (hour or day, site, method, target, error code): the unique key of a summary row.
Key = tuple[datetime.datetime, str, str, str, int]
KEY: Final = ("site", "method", "target", "error_code")  # after the time column
#: The outcomes the dashboard counts as errors (as its ``ERRORS`` filter on the rows did).
ERROR_OUTCOMES: Final = ("tool_error", "protocol_error")
_UTC: Final = datetime.UTC
_HOUR: Final = datetime.timedelta(hours=1)


@dataclass(slots=True)
class Tally:
    """What one key's requests add to its summary row."""

    count: int = 0
    errors: int = 0
    duration_sum: float = 0.0
    buckets: list[int] = field(default_factory=lambda: [0] * histogram.BUCKETS)

    def merge(self, other: Tally) -> None:
        self.count += other.count
        self.errors += other.errors
        self.duration_sum += other.duration_sum
        self.buckets = [a + b for a, b in zip(self.buckets, other.buckets, strict=True)]


def hour_of(when: datetime.datetime) -> datetime.datetime:
    """The start of ``when``'s hour, in UTC when ``when`` is aware (the rows' time zone)."""
    if when.tzinfo is not None and when.tzinfo is not _UTC:
        when = when.astimezone(_UTC)
    return when.replace(minute=0, second=0, microsecond=0)


def day_of(when: datetime.datetime) -> datetime.datetime:
    """The start of ``when``'s day, in UTC when ``when`` is aware."""
    return hour_of(when).replace(hour=0)


def by_day(hours: dict[Key, Tally]) -> dict[Key, Tally]:
    """Hourly tallies summed per UTC day."""
    out: dict[Key, Tally] = {}
    for (hour, *rest), item in hours.items():
        key: Key = (hour.replace(hour=0), *rest)  # type: ignore[assignment]
        found = out.get(key)
        if found is None:
            out[key] = Tally(item.count, item.errors, item.duration_sum, list(item.buckets))
        else:
            found.merge(item)
    return out


#: Where :func:`tally` finds what it reads in a record's :data:`~.records.Row`.
_AT, _SITE, _METHOD, _TARGET, _CODE, _DURATION, _OUTCOME = (
    FIELD_INDEX[name]
    for name in ("started_at", "site", "method", "target", "error_code", "duration_ms", "outcome")
)


def tally(records: Iterable[Row]) -> dict[Key, Tally]:
    """The records (each a :class:`~.records.RequestRecord` or its plain
    :data:`~.records.Row`) added up per key: the writer thread's only per-record work here.

    Keys are the records' own text; :func:`_storable` cleans them once per key (a request
    left out of the log by sampling was never sanitised).
    """
    raw: dict[tuple[Any, ...], Tally] = {}
    bucket = partial(bisect_right, histogram.BOUNDS)  # histogram.bucket, without its frame
    # Records come in time order, mostly within one hour: its bounds answer for the next
    # record with two comparisons (within one time zone object) instead of a truncation.
    zone: object = _UTC  # and an empty hour: the first record computes its own
    start = end = datetime.datetime.min.replace(tzinfo=_UTC)
    for record in records:
        at = record[_AT]
        if at.tzinfo is zone and start <= at < end:
            hour = start
        else:
            hour = hour_of(at)
            if hour.tzinfo is at.tzinfo:  # not converted: the bounds hold for the next
                zone, start, end = at.tzinfo, hour, hour + _HOUR
        key = (hour, record[_SITE], record[_METHOD], record[_TARGET], record[_CODE] or 0)
        item = raw.get(key)
        if item is None:
            item = raw[key] = Tally()
        duration = record[_DURATION]
        item.count += 1
        item.duration_sum += duration
        item.buckets[bucket(duration)] += 1
        if record[_OUTCOME] in ERROR_OUTCOMES:
            item.errors += 1
    return _storable(raw)


#: The summary's text columns' lengths (the request log's own: a logged key fits both).
_LIMITS: Final = {name: column_length(LogSummary, name) for name in KEY[:3]}


def _storable(raw: dict[tuple[Any, ...], Tally]) -> dict[Key, Tally]:
    """Keys with text any database stores (two raw keys may clean to one: merged)."""
    out: dict[Key, Tally] = {}
    for (hour, site, method, target, code), item in raw.items():
        key: Key = (
            hour,
            clean_text(site, _LIMITS["site"]),
            clean_text(method, _LIMITS["method"]),
            clean_text(target, _LIMITS["target"]),
            code,
        )
        found = out.get(key)
        if found is None:
            out[key] = item
        else:
            found.merge(item)
    return out
