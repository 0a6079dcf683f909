"""The request log's admin pages and the dashboard, given URL parameters no row can match:
an empty page, never a 500 and never a query the database refuses.

A hostile probe found three 500s in django-mcp's own code (Django's generic lookups, such as
``?site=%00`` on a plain column, fail in Django itself): the method filter and the
dashboard's site with a NUL (PostgreSQL refuses NUL in a query; rows are stored with NUL
replaced), and a search over 50,000 characters (SQLite's ``LIKE`` limit).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from django_mcp.requestlog.models import RequestLog, ServedRevision
from tests.records.support import log_row

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/django_mcp/requestlog/"
DASHBOARD = "/admin/django_mcp/dashboard/"
TABLE = RequestLog._meta.db_table


@pytest.fixture
def staff(admin_user: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    return client


def assert_refused_before_the_table(staff: Client, url: str, query: Any, table: str) -> None:
    """``query`` on the list at ``url`` is Django's 400, and ``table`` was never read."""
    with CaptureQueriesContext(connection) as queries:
        response = staff.get(url, query)
    assert response.status_code == 400
    assert not [q for q in queries.captured_queries if table in q["sql"]]


@pytest.mark.parametrize(
    "query",
    [
        {"method": "tools/call\x00"},
        {"method": "m" * 101},
        {"q": "x" * 50_001},
        {"q": "a\x00b"},
    ],
    ids=["method-nul", "method-long", "q-long", "q-nul"],
)
def test_the_changelist_shows_nothing_for_what_no_row_can_hold(staff: Client, query: Any) -> None:
    with CaptureQueriesContext(connection) as queries:
        response = staff.get(CHANGELIST, query)
    assert response.status_code == 200
    [value] = query.values()
    sent = [q["sql"] for q in queries.captured_queries if TABLE in q["sql"]]
    assert response.context["cl"].result_count == 0
    assert not any(value in sql for sql in sent)  # the value never reached the database


def test_the_dashboard_of_a_site_no_row_can_name_is_empty(staff: Client) -> None:
    response = staff.get(DASHBOARD, {"site": "mcp\x00"})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "query",
    [
        {"params__regex": "(a+)+$"},  # on SQLite, Python's re over every row: minutes
        {"user_agent__icontains": "x"},  # a scan of the whole table on any database
        {"target__range": "x"},  # Django's own IndexError: a 500
        {"started_at__year": "-1"},  # Django's own ValueError: a 500
        {"started_at__year": "9999"},  # an OverflowError once a time zone applies
        {"started_at__lt": "9999-12-31T23:59:59-05:00"},
        {"started_at__gte": "yesterday"},
        {"user__id__exact": "9" * 20},  # OverflowError on SQLite
        {"permission_denied__exact": "maybe"},
        {"site": "mcp\x00"},
        {"started_at__gte": "0001-01-01T00:00:00+05:00"},  # OverflowError on SQLite
        {"started_at__gte": "2026-11-01T00:00:00+16:00"},  # PostgreSQL: offset out of range
        {"started_at__lt": "9998-12-31T23:59:59-23:59"},
        {"started_at__year": "1"},  # before year 1 in UTC east of Greenwich
        {"started_at__date": "2026-02-30"},
        {"error_code": "-3260x"},
        {"error_message__contains": "x"},
        {"id__gt": "1"},
    ],
    ids=[
        "regex",
        "icontains",
        "range",
        "year",
        "year-9999",
        "lt-overflow",
        "gte-word",
        "user-huge",
        "bool-word",
        "site-nul",
        "year-1-offset",
        "offset-16h",
        "offset-23h",
        "year-1",
        "date-impossible",
        "error-code-word",
        "contains",
        "pk",
    ],
)
def test_lookups_the_filters_do_not_offer_are_refused(staff: Client, query: Any) -> None:
    """Django's admin accepts any lookup on any column by default; the request log's list
    takes only its filters' own, each answered by an index (hostile admin review: a
    view-only user's ``params__regex`` held every admin page for 90 seconds)."""
    RequestLog.objects.create(
        started_at=timezone.now(), method="tools/call", outcome="ok", http_status=200, duration_ms=1
    )
    assert_refused_before_the_table(staff, CHANGELIST, query, TABLE)


@pytest.mark.parametrize(
    "query",
    [
        {"outcome__exact": "ok"},
        {"served_how__exact": "exact"},
        {"permission_denied__exact": "1"},
        {"method": "tools/call"},
        {"started": "all"},
        {"started": "all", "outcome__exact": "ok", "q": "add", "o": "1", "p": "1"},
        {"site": "mcp"},
        {"declared_revision": "2027-01-01"},
        {"user__id__exact": "1"},
        {"started_at__year": "2026", "started_at__month": "12", "started_at__day": "1"},
        {"started_at__gte": "2026-12-01 00:00:00+00:00"},
        {"started_at__lt": "2026-12-01 10:00:00.123456+00:00"},
        {"started_at__gte": "2026-12-01T10:00:00Z"},
        {"started_at__date": "2026-12-01"},
        {"target": "add"},
        {"outcome": "ok"},
        {"error_code": "-32602"},
        {"user": "1"},
        {"user_id": "1"},
    ],
)
def test_the_declared_filters_still_filter(staff: Client, query: Any) -> None:
    response = staff.get(CHANGELIST, query)
    assert response.status_code == 200


def test_a_time_range_without_time_zones_lists_its_rows(staff: Client, settings: Any) -> None:
    """``USE_TZ = False``: the span check (``is_bounded``) read the lower bound as an aware
    time and, with no upper bound, took it from the naive ``timezone.now()``, a TypeError:
    every page given a ``started_at__gte`` or ``__gt`` alone was a 500."""
    settings.USE_TZ = False
    log_row(started_at=datetime.datetime(2026, 3, 10, 12), target="in")
    log_row(started_at=datetime.datetime(2026, 3, 9, 12), target="out")
    for query in [
        {"started_at__gte": "2026-03-10"},
        {"started_at__gt": "2026-03-10 00:00:00"},
    ]:
        response = staff.get(CHANGELIST, query)
        assert response.status_code == 200, query
        assert [row.target for row in response.context["cl"].result_list] == ["in"]


@pytest.mark.parametrize(
    ("url", "query"),
    [
        (CHANGELIST, {"started_at__lt": "2026-03-11T00:00:00+02:00"}),
        (CHANGELIST, {"started_at": "2026-03-10T12:00:00Z"}),
        (CHANGELIST, {"started_at__gte": "2026-03-10 00:00:00+00:00"}),
        ("/admin/django_mcp/accesstoken/", {"expires_at__gte": "2026-03-10T00:00:00Z"}),
    ],
)
def test_a_time_with_an_offset_without_time_zones_is_refused(
    staff: Client, settings: Any, url: str, query: Any
) -> None:
    """``USE_TZ = False``: the columns hold naive times, and SQLite (MySQL, Oracle) refuses
    to compare one with an aware time: a 500. Django's own date filters send no offset
    then, so an offset is Django's 400 on every database."""
    settings.USE_TZ = False
    log_row(started_at=datetime.datetime(2026, 3, 10, 12))
    assert staff.get(url, query).status_code == 400


@pytest.mark.parametrize("field", ["outcome__exact", "served_how__exact"])
def test_a_field_filter_given_nul_is_refused_not_sent(staff: Client, field: str) -> None:
    """PostgreSQL refuses NUL in a query: a 500 from the list's own filter bar before."""
    assert_refused_before_the_table(staff, CHANGELIST, {field: "ok\x00"}, TABLE)


SERVED = "/admin/django_mcp/servedrevision/"
SERVED_TABLE = ServedRevision._meta.db_table


@pytest.fixture
def served_row() -> ServedRevision:
    now = timezone.now()
    return ServedRevision.objects.create(
        revision="2027-01-01",
        client_name="zed",
        client_version="1",
        count=3,
        first_seen=now,
        last_seen=now,
    )


@pytest.mark.parametrize(
    "query",
    [
        {"last_seen__year": "9999"},  # Django's hierarchy reached for year 10000: a 500
        {"last_seen__year": "1"},
        {"last_seen__year": "-1"},
        {"last_seen__year": "2026", "last_seen__month": "13"},
        {"last_seen__year": "2026", "last_seen__month": "12", "last_seen__day": "32"},
        {"client_name__regex": "(a+)+$"},
        {"count__gt": "1"},
        {"revision": "2027\x00"},
    ],
    ids=["year-9999", "year-1", "year-negative", "month-13", "day-32", "regex", "count", "nul"],
)
def test_the_served_revisions_list_refuses_lookups_it_does_not_offer(
    staff: Client, served_row: ServedRevision, query: Any
) -> None:
    """The best-effort revisions' list takes its filter and its date hierarchy only, each
    with a value Django can bound: anything else is a 400, not a 500 or a scan."""
    assert_refused_before_the_table(staff, SERVED, query, SERVED_TABLE)


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"revision": "2027-01-01"},
        {"revision__exact": "2027-01-01"},
        {"last_seen__year": "9998", "last_seen__month": "12", "last_seen__day": "31"},
        {"last_seen__year": "2"},
        {"q": "zed", "o": "1"},
    ],
)
def test_the_served_revisions_list_still_filters(
    staff: Client, served_row: ServedRevision, query: Any
) -> None:
    response = staff.get(SERVED, query)
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("url", "query"),
    [
        ("/admin/django_mcp/servedrevision/", {"q": "x" * 50_001}),  # SQLite: LIKE too long
        ("/admin/django_mcp/mcptask/", {"q": "x" * 50_001}),
    ],
    ids=["served-long", "task-long"],
)
def test_a_search_no_row_can_match_finds_nothing(
    staff: Client, served_row: ServedRevision, url: str, query: Any
) -> None:
    response = staff.get(url, query)
    assert response.status_code == 200
    assert response.context["cl"].result_count == 0


@pytest.mark.parametrize(
    "query",
    [
        {"site": "a\x00b"},  # PostgreSQL refuses NUL in a query
        {"status": "a\x00b"},
        {"status__exact": "a\x00b"},
        {"owner": "x"},  # no filter offers it
        {"id__in": "99999999999999999999"},
        {"site__isnull": "maybe"},
    ],
    ids=["site-nul", "status-nul", "status-exact-nul", "owner", "id-in", "isnull-garbage"],
)
def test_the_task_list_refuses_what_its_filters_do_not_offer(staff: Client, query: Any) -> None:
    assert staff.get("/admin/django_mcp/mcptask/", query).status_code == 400


@pytest.mark.parametrize(
    "query", [{"status__exact": "working"}, {"site__exact": "mcp"}, {"site": "mcp"}, {"q": "x"}]
)
def test_the_task_list_still_filters(staff: Client, query: Any) -> None:
    assert staff.get("/admin/django_mcp/mcptask/", query).status_code == 200


@pytest.mark.parametrize("view", ["change", "history", "delete"])
def test_a_task_page_for_an_id_with_nul_is_not_found(staff: Client, view: str) -> None:
    """A task's id is text: an id with NUL names no task, and was a 500 on PostgreSQL,
    which refuses NUL in a query (the delete page is refused: tasks are read-only)."""
    response = staff.get(f"/admin/django_mcp/mcptask/a%00b/{view}/")
    assert response.status_code in (302, 403)  # the admin redirects a missing object
