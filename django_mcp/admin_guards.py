"""Query-string guards for django-mcp's admin lists: a value no row can hold is refused
(Django's 400) or matches nothing, never sent to a database that answers it with a 500.

Why: Django's admin accepts any lookup on any column of the model, and passes the search
term to ``LIKE``. PostgreSQL refuses NUL in a query, SQLite refuses a ``LIKE`` pattern over
50,000 bytes and raises ``OverflowError`` for an integer past 64 bits; each was a 500 on
the access tokens', the MCP tasks' or the best-effort revisions' list (hostile admin
review). The request log's changelist (:mod:`django_mcp.requestlog.lookups`) is guarded by
the same checks. Below the layers that use it: it imports nothing of django_mcp.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

if TYPE_CHECKING:
    from django.db.models import Model, QuerySet
    from django.http import HttpRequest

    _ModelAdmin = admin.ModelAdmin[Any]
else:  # ModelAdmin is generic only in the type stubs
    _ModelAdmin = admin.ModelAdmin

#: A 64-bit column's range (SQLite raises OverflowError past it).
INT64: Final = (-(2**63), 2**63 - 1)
#: The years a date or time may name: year 1 and year 9999 may leave the databases' range
#: once a time zone is applied, so those two are refused.
YEARS: Final = (2, 9998)
#: The widest offset PostgreSQL takes (Python takes up to 23:59).
MAX_OFFSET: Final = datetime.timedelta(hours=15, minutes=59)

Check = Callable[[str], bool]


def anything(value: str) -> bool:
    """Any text (NUL is refused before any check runs)."""
    return True


def is_boolean(value: str) -> bool:
    return value in {"0", "1", "True", "False", "true", "false"}


def is_int64(value: str) -> bool:
    try:
        number = int(value)
    except ValueError:
        return False
    return INT64[0] <= number <= INT64[1]


def is_user_key(value: str) -> bool:
    """A primary key of the user model that the database can compare."""
    key = get_user_model()._meta.pk
    if key is None:
        return False
    try:
        parsed = key.to_python(value)
    except ValidationError:
        return False
    return not isinstance(parsed, int) or INT64[0] <= parsed <= INT64[1]


def user_lookups(field: str = "user") -> frozenset[str]:
    """``user``, ``user_id`` and ``user__<pk>__exact`` (``user__id__exact`` for Django's
    own user model), whatever the user model's primary key is called."""
    key = get_user_model()._meta.pk
    name = key.name if key is not None else "id"
    return frozenset(
        {field, f"{field}_id", f"{field}__exact", f"{field}__{name}", f"{field}__{name}__exact"}
    )


def is_date(value: str) -> bool:
    try:
        day = parse_date(value.strip())
    except ValueError:  # well-formed but impossible: 2026-02-30
        return False
    return day is not None and YEARS[0] <= day.year <= YEARS[1]


def is_time(value: str) -> bool:
    """A date, or a date and time, that the databases can compare (see :func:`moment`)."""
    return moment(value) is not None


def moment(value: str) -> datetime.datetime | None:
    """The aware date and time a date lookup's ``value`` stands for, as the ORM reads it
    (a date is its midnight, a naive time is in the current time zone), or None unless
    the databases can compare it: its offset within PostgreSQL's range, and within
    :data:`YEARS` once in UTC (a year-1 time with a positive offset is not even in year 1
    there). Without ``USE_TZ`` a time with an offset is refused: the columns hold naive
    times, which SQLite, MySQL and Oracle refuse to compare with an aware one (a 500), and
    Django's own date filters send none then."""
    value = value.strip()
    try:
        found = parse_datetime(value)
        if found is None:
            day = parse_date(value)
            if day is None:
                return None
            found = datetime.datetime.combine(day, datetime.time())
        if timezone.is_naive(found):
            found = timezone.make_aware(found, timezone.get_current_timezone())
        elif not settings.USE_TZ:
            return None
        offset = found.utcoffset()
        if offset is None or abs(offset) > MAX_OFFSET:
            return None
        in_utc = found.astimezone(datetime.UTC)
    except (ValueError, OverflowError):  # impossible dates, offsets out of range
        return None
    return found if YEARS[0] <= in_utc.year <= YEARS[1] else None


def date_filter_lookups(field: str) -> dict[str, Check]:
    """The parameters of Django's ``DateFieldListFilter`` on ``field``."""
    return {f"{field}__gte": is_time, f"{field}__lt": is_time, f"{field}__isnull": is_boolean}


def searched_length(model: type[Model], search_fields: tuple[str, ...] | list[str]) -> int:
    """The longest search that could match: the searched columns' lengths together (a
    term is split in words, each matched in some column). A column without a length
    (``TextField``) or a path that cannot be followed lifts the bound."""
    total = 0
    for name in search_fields:
        target: Any = model
        field: Any = None
        try:
            for part in name.lstrip("^=@").split("__"):
                field = target._meta.get_field(part)
                target = field.related_model
        except (AttributeError, FieldDoesNotExist):
            return 50_000
        total += (getattr(field, "max_length", None) or 50_000) + 1
    return total


class GuardedAdmin(_ModelAdmin):
    """A ``ModelAdmin`` whose query string reaches the database only with values it takes.

    ``guarded_lookups()`` names the lookups the list accepts (its filters' own, and any
    equality it offers), each with a check of its value; anything else, or any value with
    NUL, is Django's 400 for a disallowed lookup. A search with NUL, or longer than the
    searched columns together (:func:`searched_length`), matches nothing.
    """

    def guarded_lookups(self) -> Mapping[str, Check]:
        return {}

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        check = self.guarded_lookups().get(lookup)
        return check is not None and "\x00" not in value and check(value)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        if "\x00" in search_term or len(search_term.strip()) > searched_length(
            self.model, self.get_search_fields(request)
        ):
            return queryset.none(), False
        found: tuple[QuerySet[Any], bool] = super().get_search_results(
            request, queryset, search_term
        )
        return found

    def get_object(
        self, request: HttpRequest, object_id: str, from_field: str | None = None
    ) -> Any:
        """None (the admin's "not found") for an id with NUL, which no row holds: a task's
        id is text, and PostgreSQL answered ``/mcptask/a%00b/change/`` with a 500."""
        if "\x00" in object_id:
            return None
        return super().get_object(request, object_id, from_field)
