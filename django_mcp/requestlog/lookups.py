"""Which query-string lookups the request log's changelist accepts, and with what values.

Why: Django's admin accepts any lookup on any column of the model by default
(``?params__regex=(a+)+$``, ``?user_agent__icontains=x``). On a table that takes a row per
request each is a scan of the whole log; on SQLite a regular expression runs in Python and
held every admin page of the process for minutes (hostile admin review); and values a
database or Django cannot take (NUL on PostgreSQL, ``?target__range=x``,
``?started_at__year=-1``, a time zone offset PostgreSQL refuses, a 20-digit id on SQLite)
were answered with a 500. What is accepted: the declared filters' own parameters, the time
lookups on ``started_at`` that replace the default window
(:class:`~.filters.StartedWithinFilter`), and equality on the columns a row is told apart
by (``site``, ``declared_revision``, ``target``, ``error_code``, the user), each with a
value it can take. Anything else is Django's 400 for a disallowed lookup.

The best-effort revisions' list (:func:`served_lookup_allowed`) gets the same treatment:
its revision filter and its date hierarchy's parts, each year within :data:`YEARS` (Django's
own hierarchy code answered ``?last_seen__year=9999`` with a 500, reaching for year 10000).
"""

from __future__ import annotations

import datetime
from typing import Final

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

#: Lookups whose own code refuses what no row holds (:mod:`.filters`).
FILTER_PARAMETERS: Final = frozenset({"started", "method"})
#: Text columns matched by equality (``outcome`` and ``served_how`` are field filters).
TEXT_COLUMNS: Final = ("outcome", "served_how", "site", "declared_revision", "target")
TEXT_LOOKUPS: Final = frozenset(
    lookup for column in TEXT_COLUMNS for lookup in (column, f"{column}__exact")
)
BOOLEAN_LOOKUPS: Final = frozenset({"permission_denied", "permission_denied__exact"})
INTEGER_LOOKUPS: Final = frozenset({"error_code", "error_code__exact"})
#: ``started_at`` compared with a date or a time.
TIME_LOOKUPS: Final = frozenset(
    {"started_at", "started_at__gte", "started_at__gt", "started_at__lte", "started_at__lt"}
)
DATE_LOOKUPS: Final = frozenset({"started_at__date"})
#: The years a date or time may name: year 1 and year 9999 may leave the databases' range
#: once a time zone is applied, so those two are refused.
YEARS: Final = (2, 9998)


def date_part_ranges(field: str) -> dict[str, tuple[int, int]]:
    """The year, month and day lookups on ``field`` (what a date hierarchy sends), each
    with the values a database and Django's hierarchy can take."""
    return {f"{field}__year": YEARS, f"{field}__month": (1, 12), f"{field}__day": (1, 31)}


#: The parts of ``started_at``.
PART_RANGES: Final = date_part_ranges("started_at")
#: The widest offset PostgreSQL takes (Python takes up to 23:59).
MAX_OFFSET: Final = datetime.timedelta(hours=15, minutes=59)
#: A 64-bit column's range (SQLite raises OverflowError past it).
INT64: Final = (-(2**63), 2**63 - 1)


def lookup_allowed(lookup: str, value: str) -> bool:
    """Whether the changelist may filter by ``lookup`` with ``value``."""
    if lookup in FILTER_PARAMETERS:
        return True
    if "\x00" in value:  # PostgreSQL refuses NUL in a query; no row holds one
        return False
    if lookup in TEXT_LOOKUPS:
        return True
    if lookup in BOOLEAN_LOOKUPS:
        return value in {"0", "1", "True", "False", "true", "false"}
    if lookup in INTEGER_LOOKUPS:
        return _is_int64(value)
    if lookup in user_lookups():
        return _is_user_key(value)
    if lookup in PART_RANGES:
        return _within(value, PART_RANGES[lookup])
    if lookup in TIME_LOOKUPS:
        return _is_time(value.strip())
    if lookup in DATE_LOOKUPS:
        return _is_date(value.strip())
    return False


#: The served-revision list's filter, and the parts its date hierarchy sends.
SERVED_TEXT_LOOKUPS: Final = frozenset({"revision", "revision__exact"})
SERVED_PART_RANGES: Final = date_part_ranges("last_seen")


def served_lookup_allowed(lookup: str, value: str) -> bool:
    """Whether the best-effort revisions' list may filter by ``lookup`` with ``value``."""
    if "\x00" in value:
        return False
    if lookup in SERVED_TEXT_LOOKUPS:
        return True
    if lookup in SERVED_PART_RANGES:
        return _within(value, SERVED_PART_RANGES[lookup])
    return False


def _within(value: str, bounds: tuple[int, int]) -> bool:
    """Whether ``value`` is a number written in ASCII digits within ``bounds``."""
    return value.isascii() and value.isdigit() and bounds[0] <= int(value) <= bounds[1]


def user_lookups() -> frozenset[str]:
    """``user``, ``user_id`` and ``user__<pk>__exact`` (``user__id__exact`` for Django's
    own user model), whatever the user model's primary key is called."""
    key = get_user_model()._meta.pk
    name = key.name if key is not None else "id"
    return frozenset({"user", "user_id", "user__exact", f"user__{name}", f"user__{name}__exact"})


def _is_user_key(value: str) -> bool:
    key = get_user_model()._meta.pk
    if key is None:
        return False
    try:
        parsed = key.to_python(value)
    except ValidationError:
        return False
    return not isinstance(parsed, int) or INT64[0] <= parsed <= INT64[1]


def _is_int64(value: str) -> bool:
    try:
        number = int(value)
    except ValueError:
        return False
    return INT64[0] <= number <= INT64[1]


def _is_date(value: str) -> bool:
    try:
        day = parse_date(value)
    except ValueError:  # well-formed but impossible: 2026-02-30
        return False
    return day is not None and YEARS[0] <= day.year <= YEARS[1]


def _is_time(value: str) -> bool:
    """A date, or a date and time, that the databases can compare: its offset within
    PostgreSQL's range, and within :data:`YEARS` once in UTC (a year-1 time with a
    positive offset is not even in year 1 there)."""
    try:
        moment = parse_datetime(value)
        if moment is None:
            day = parse_date(value)
            if day is None:
                return False
            moment = datetime.datetime.combine(day, datetime.time())
        if timezone.is_naive(moment):
            moment = timezone.make_aware(moment, timezone.get_current_timezone())
        offset = moment.utcoffset()
        if offset is None or abs(offset) > MAX_OFFSET:
            return False
        in_utc = moment.astimezone(datetime.UTC)
    except (ValueError, OverflowError):  # impossible dates, offsets out of range
        return False
    return YEARS[0] <= in_utc.year <= YEARS[1]
