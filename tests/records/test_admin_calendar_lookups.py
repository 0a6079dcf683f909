"""A date, or a year, month and day, in the request log's query string is answered as a
range of ``started_at`` (docs/guides/records.md, "At scale").

Django answers ``?started_at__date=``, ``__month`` and ``__day`` with a function of the
column (``started_at::date``, ``EXTRACT(day ...)``), which no index serves: on PostgreSQL
each such page read every row of the log (hostile admin review: 50,000 of 50,000 rows for
one day's 72). A month or a day of every year names no range, so it is refused.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.db import connection
from django.db.models.expressions import Col
from django.db.models.lookups import Lookup
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from django_mcp.requestlog.models import RequestLog
from tests.records.support import log_row
from tests.records.test_admin_at_scale import assert_each_read_is_bounded, fill_log, postgresql

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:django_mcp_requestlog_changelist")


def lookups_of(where: Any) -> list[Lookup[Any]]:
    found: list[Lookup[Any]] = []
    for child in where.children:
        found.extend(lookups_of(child) if hasattr(child, "children") else [child])
    return found


def local(*parts: int) -> datetime.datetime:
    return timezone.make_aware(datetime.datetime(*parts), timezone.get_current_timezone())


def named_by(query: dict[str, str], day: datetime.date) -> bool:
    """Whether the local ``day`` is in the date, or the year, month and day, of ``query``."""
    if "started_at__date" in query:
        return day.isoformat() == query["started_at__date"]
    parts = {"year": day.year, "month": day.month, "day": day.day}
    return all(
        int(query[f"started_at__{key}"]) == value
        for key, value in parts.items()
        if f"started_at__{key}" in query
    )


@pytest.mark.parametrize(
    "query",
    [
        {"started_at__date": "2026-03-10"},
        {"started_at__year": "2026", "started_at__month": "3", "started_at__day": "11"},
        {"started_at__year": "2026", "started_at__month": "3"},
        {"started_at__year": "2026"},
    ],
    ids=["date", "day", "month", "year"],
)
def test_calendar_lookups_list_what_django_would_as_a_plain_range(admin_client, settings, query):
    """The rows are those Django's own lookups find, in the current time zone (13 hours
    ahead of UTC here, so the UTC date differs), and every condition on the log compares
    the column itself, never a function of it. (The expected rows are worked out here:
    on MySQL without its time zone tables Django's own lookups find none.)"""
    settings.TIME_ZONE = "Pacific/Auckland"
    times = [(2026, 3, 10, 23, 30), (2026, 3, 11, 0, 30), (2026, 4, 1, 0, 10), (2025, 12, 31, 23)]
    for parts in times:
        log_row(started_at=local(*parts), target=f"{parts}")
    expected = {f"{parts}" for parts in times if named_by(query, datetime.date(*parts[:3]))}
    if connection.vendor != "mysql":
        assert expected == set(RequestLog.objects.filter(**query).values_list("target", flat=True))

    response = admin_client.get(CHANGELIST, query)

    assert response.status_code == 200
    assert {row.target for row in response.context["cl"].result_list} == expected
    assert expected
    conditions = lookups_of(response.context["cl"].queryset.query.where)
    assert conditions
    assert all(isinstance(condition.lhs, Col) for condition in conditions), conditions


def test_calendar_lookups_without_time_zones_compare_naive_times(admin_client, settings):
    """``USE_TZ = False``: the column holds naive local times, so the range is naive too
    (an aware one is refused by the database backend)."""
    settings.USE_TZ = False
    for parts in [(2026, 3, 10, 23, 30), (2026, 3, 11, 0, 30)]:
        log_row(started_at=datetime.datetime(*parts), target=f"{parts}")
    response = admin_client.get(CHANGELIST, {"started_at__date": "2026-03-11"})
    assert response.status_code == 200
    assert [row.target for row in response.context["cl"].result_list] == ["(2026, 3, 11, 0, 30)"]


@pytest.mark.parametrize(
    "query",
    [
        {"started_at__month": "3"},
        {"started_at__day": "11"},
        {"started_at__year": "2026", "started_at__day": "11"},
        {"started_at__date": ["2026-03-10", "2020-01-01"]},
        {"started_at__date": "2026-03-10", "started_at__year": "2026"},
    ],
    ids=["month-of-every-year", "day-of-every-month", "day-without-month", "two-dates", "both"],
)
def test_calendar_lookups_that_name_no_one_span_are_refused(admin_client, query):
    assert admin_client.get(CHANGELIST, query).status_code == 400


def test_a_day_its_month_lacks_is_an_incorrect_lookup(admin_client):
    query = {"started_at__year": "2026", "started_at__month": "2", "started_at__day": "31"}
    response = admin_client.get(CHANGELIST, query)
    assert response.status_code == 302
    assert response["Location"].endswith("?e=1")


@postgresql
@pytest.mark.parametrize(
    "parts",
    [("date",), ("year", "month", "day"), ("year", "month")],
    ids=["date", "day", "month"],
)
def test_a_calendar_page_reads_only_its_span(admin_client, parts) -> None:
    """50,000 rows 20 minutes apart (about 700 days): a day's page read all of them."""
    fill_log(50_000, seconds_apart=1200)
    day = timezone.localdate() - datetime.timedelta(days=40)
    values = {"date": day.isoformat(), "year": day.year, "month": day.month, "day": day.day}
    query = {f"started_at__{part}": values[part] for part in parts}
    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(CHANGELIST, {**query, "o": "6"})
    assert response.status_code == 200
    assert response.context["cl"].result_count > 0
    assert_each_read_is_bounded(queries)
