"""Which query-string lookups the request log's changelist accepts, and with what values.

Why: Django's admin accepts any lookup on any column of the model by default
(``?params__regex=(a+)+$``, ``?user_agent__icontains=x``). On a table that takes a row per
request each is a scan of the whole log; on SQLite a regular expression runs in Python and
held every admin page of the process for minutes (hostile admin review); and values a
database or Django cannot take (NUL on PostgreSQL, ``?target__range=x``,
``?started_at__year=-1``, a 20-digit id on SQLite) were answered with a 500. What is
accepted: the declared filters' own parameters, the time lookups on ``started_at`` that
replace the default window (:class:`~.filters.StartedWithinFilter`), and the exact matches
the records guide names (``site``, ``declared_revision``, ``user__id__exact``), each
with a value it can take. Anything else is Django's 400 for a disallowed lookup.
"""

from __future__ import annotations

from typing import Final

from django.utils.dateparse import parse_date, parse_datetime

#: Lookups whose own code refuses what no row holds (:mod:`.filters`).
FILTER_PARAMETERS: Final = frozenset({"started", "method"})
#: Text lookups, exact: the declared field filters and the guide's URL filters.
TEXT_LOOKUPS: Final = frozenset(
    {"outcome__exact", "served_how__exact", "site", "declared_revision"}
)
BOOLEAN_LOOKUPS: Final = frozenset({"permission_denied__exact"})
USER_LOOKUPS: Final = frozenset({"user__id__exact"})
#: ``started_at`` compared with a date or a time, and its parts.
TIME_LOOKUPS: Final = frozenset(
    {"started_at", "started_at__gte", "started_at__gt", "started_at__lte", "started_at__lt"}
)
PART_RANGES: Final = {
    "started_at__year": (1, 9998),  # 9999 overflows once a time zone is applied
    "started_at__month": (1, 12),
    "started_at__day": (1, 31),
}
#: The largest id a 64-bit column takes (SQLite raises OverflowError past it).
MAX_ID: Final = 2**63 - 1


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
    if lookup in USER_LOOKUPS:
        return value.isascii() and value.isdigit() and int(value) <= MAX_ID
    if lookup in PART_RANGES:
        low, high = PART_RANGES[lookup]
        return value.isascii() and value.isdigit() and low <= int(value) <= high
    if lookup in TIME_LOOKUPS:
        return _is_time(value)
    return False


def _is_time(value: str) -> bool:
    """A date or a date and time that the database can compare (year 1 to 9998)."""
    try:
        moment = parse_datetime(value.strip()) or parse_date(value.strip())
    except ValueError:  # well-formed but impossible: 2026-02-30
        return False
    return moment is not None and 1 <= moment.year <= PART_RANGES["started_at__year"][1]
