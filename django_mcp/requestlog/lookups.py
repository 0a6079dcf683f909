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
The value checks are shared with django-mcp's other admin lists (:mod:`django_mcp.admin_guards`).
"""

from __future__ import annotations

from typing import Final

from django_mcp.admin_guards import (
    YEARS,
    is_boolean,
    is_date,
    is_int64,
    is_time,
    is_user_key,
    user_lookups,
)

#: Lookups whose own code refuses what no row holds (:mod:`.filters`).
FILTER_PARAMETERS: Final = frozenset({"started", "method"})
#: Text columns matched by equality (``outcome`` and ``served_how`` are field filters).
TEXT_COLUMNS: Final = ("outcome", "served_how", "site", "declared_revision", "target")
TEXT_LOOKUPS: Final = frozenset(
    lookup for column in TEXT_COLUMNS for lookup in (column, f"{column}__exact")
)
BOOLEAN_LOOKUPS: Final = frozenset({"permission_denied", "permission_denied__exact"})
#: Equality on columns no index leads with: allowed only within a span of time.
WINDOW_ONLY_LOOKUPS: Final = frozenset(
    lookup
    for column in ("site", "declared_revision", "error_code")
    for lookup in (column, f"{column}__exact")
)
INTEGER_LOOKUPS: Final = frozenset({"error_code", "error_code__exact"})
#: ``started_at`` compared with a date or a time.
TIME_LOOKUPS: Final = frozenset(
    {"started_at", "started_at__gte", "started_at__gt", "started_at__lte", "started_at__lt"}
)
DATE_LOOKUPS: Final = frozenset({"started_at__date"})


def date_part_ranges(field: str) -> dict[str, tuple[int, int]]:
    """The year, month and day lookups on ``field`` (what a date hierarchy sends), each
    with the values a database and Django's hierarchy can take."""
    return {f"{field}__year": YEARS, f"{field}__month": (1, 12), f"{field}__day": (1, 31)}


#: The parts of ``started_at``.
PART_RANGES: Final = date_part_ranges("started_at")


def lookup_allowed(lookup: str, value: str) -> bool:
    """Whether the changelist may filter by ``lookup`` with ``value``."""
    if lookup in FILTER_PARAMETERS:
        return True
    if "\x00" in value:  # PostgreSQL refuses NUL in a query; no row holds one
        return False
    if lookup in TEXT_LOOKUPS:
        return True
    if lookup in BOOLEAN_LOOKUPS:
        return is_boolean(value)
    if lookup in INTEGER_LOOKUPS:
        return is_int64(value)
    if lookup in user_lookups():
        return is_user_key(value)
    if lookup in PART_RANGES:
        return _within(value, PART_RANGES[lookup])
    if lookup in TIME_LOOKUPS:
        return is_time(value)
    if lookup in DATE_LOOKUPS:
        return is_date(value)
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
