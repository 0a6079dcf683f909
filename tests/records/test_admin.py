"""The admin shows the request log and the best-effort revisions, read-only
(docs/guides/records.md, "The admin").
"""

from __future__ import annotations

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone

from django_mcp.requestlog import recorder
from django_mcp.requestlog.admin import RequestLogAdmin
from django_mcp.requestlog.models import RequestLog, ServedRevision
from tests.records.support import (
    FUTURE_REVISION,
    best_effort_call,
    log_row,
    missing_book,
    search,
    steady_exchange_clock,
)

pytestmark = pytest.mark.django_db

REQUEST_LOG = "admin:django_mcp_requestlog"
SERVED = "admin:django_mcp_servedrevision"


@pytest.fixture
def logged(client, monkeypatch):
    """Rows written the way production writes them: real MCP calls, then a flush; started
    within one hour and one day (a calendar lookup below expects all three on one day)."""
    steady_exchange_clock(monkeypatch)
    search(client)
    missing_book(client)
    best_effort_call(client)
    recorder.flush()


@pytest.mark.usefixtures("logged")
def test_the_request_log_changelist_lists_recorded_calls(admin_client):
    response = admin_client.get(reverse(f"{REQUEST_LOG}_changelist"))

    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == list(RequestLog.objects.all())
    assert b"search_books" in response.content
    assert b"whoami" in response.content


@pytest.mark.usefixtures("logged")
@pytest.mark.parametrize(
    ("query", "targets"),
    [
        ({"outcome__exact": "tool_error"}, {"get_book"}),
        ({"served_how__exact": "best-effort"}, {"whoami"}),
        ({"method": "tools/call"}, {"search_books", "get_book", "whoami"}),
        ({"declared_revision": FUTURE_REVISION}, {"whoami"}),
        ({"q": "future-client"}, {"whoami"}),
        ({"q": "search_books"}, {"search_books"}),
    ],
)
def test_the_request_log_filters_and_searches(admin_client, query, targets):
    response = admin_client.get(reverse(f"{REQUEST_LOG}_changelist"), query)

    assert response.status_code == 200
    assert {row.target for row in response.context["cl"].result_list} == targets


@pytest.mark.usefixtures("logged")
def test_a_date_chosen_by_lookup_replaces_the_default_window(admin_client):
    log_row(days_ago=3, target="older")
    started = RequestLog.objects.latest().started_at
    query = {
        "started_at__year": started.year,
        "started_at__month": started.month,
        "started_at__day": started.day,
    }

    response = admin_client.get(reverse(f"{REQUEST_LOG}_changelist"), query)

    assert response.status_code == 200
    assert len(response.context["cl"].result_list) == 3
    older = admin_client.get(reverse(f"{REQUEST_LOG}_changelist"), {"started_at__lt": started})
    assert "older" in {row.target for row in older.context["cl"].result_list}


@pytest.mark.usefixtures("logged")
def test_the_served_revisions_changelist_lists_best_effort_serves(admin_client):
    response = admin_client.get(reverse(f"{SERVED}_changelist"))

    assert response.status_code == 200
    assert [(s.revision, s.client_name, s.count) for s in response.context["cl"].result_list] == [
        (FUTURE_REVISION, "future-client", 1)
    ]


@pytest.mark.usefixtures("logged")
def test_an_entry_can_be_viewed_but_not_changed(admin_client):
    entry = RequestLog.objects.first()
    assert entry is not None
    url = reverse(f"{REQUEST_LOG}_change", args=[entry.pk])

    assert admin_client.get(url).status_code == 200
    assert admin_client.post(url, {"target": "forged"}).status_code == 403
    entry.refresh_from_db()
    assert entry.target != "forged"


@pytest.mark.parametrize("model", [REQUEST_LOG, SERVED])
def test_nothing_can_be_added_or_deleted(admin_client, model):
    row = log_row() if model == REQUEST_LOG else _served_row()

    assert admin_client.get(reverse(f"{model}_add")).status_code == 403
    delete = admin_client.post(reverse(f"{model}_delete", args=[row.pk]), {"post": "yes"})
    assert delete.status_code == 403
    changelist = admin_client.get(reverse(f"{model}_changelist"))
    assert changelist.context["action_form"] is None  # no bulk "delete selected" action
    assert type(row).objects.filter(pk=row.pk).exists()


def test_the_log_is_not_visible_to_anonymous_visitors(client):
    response = client.get(reverse(f"{REQUEST_LOG}_changelist"))

    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]


def _served_row() -> ServedRevision:
    row = log_row()
    return ServedRevision.objects.create(
        revision=FUTURE_REVISION,
        client_name="c",
        client_version="1",
        count=1,
        first_seen=row.started_at,
        last_seen=row.started_at,
    )


# -- over the whole log: only what an index answers --------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("column", ["declared_revision", "error_code", "site"])
def test_a_column_no_index_leads_with_is_filtered_only_within_a_span_of_time(admin_client, column):
    """docs/guides/records.md, "At scale": equality on ``declared_revision``,
    ``error_code`` or ``site`` is answered within a window (the window index reads the
    span); over the whole log ("Any time") it read every row, so it is refused there with
    Django's 400 for a disallowed lookup. A recent lower bound on ``started_at`` is a span."""
    log_row(site="mcp", declared_revision="2099-01-01", error_code=-32602, target="hit")
    value = {"declared_revision": "2099-01-01", "error_code": "-32602", "site": "mcp"}[column]
    url = reverse(f"{REQUEST_LOG}_changelist")

    within = admin_client.get(url, {column: value})
    assert within.status_code == 200
    assert [row.target for row in within.context["cl"].result_list] == ["hit"]
    assert admin_client.get(url, {"started": "all", column: value}).status_code == 400
    since = (timezone.now() - datetime.timedelta(days=1)).isoformat()
    bounded = admin_client.get(url, {column: value, "started_at__gte": since})
    assert bounded.status_code == 200


@pytest.mark.django_db
def test_over_the_whole_log_only_the_start_time_is_sortable(admin_client):
    """Sorting by another column over "Any time" read and sorted every row: its header is
    no link there and ``?o=`` on it is ignored (the newest rows come first, as the window
    index has them); within a window every column sorts."""
    log_row(days_ago=0.1, target="slow", duration_ms=900.0)
    log_row(days_ago=0.2, target="fast", duration_ms=1.0)
    url = reverse(f"{REQUEST_LOG}_changelist")
    duration = str(RequestLogAdmin.list_display.index("duration"))

    anytime = admin_client.get(url, {"started": "all", "o": duration})
    within = admin_client.get(url, {"started": "24h", "o": duration})

    assert [row.target for row in anytime.context["cl"].result_list] == ["slow", "fast"]
    assert anytime.context["cl"].sortable_by == ("started_at",)
    assert [row.target for row in within.context["cl"].result_list] == ["fast", "slow"]


#: Django warns of a date alone compared with a ``DateTimeField``; the tests make warnings
#: errors, which the admin would turn into its "?e=1" redirect.
NAIVE_DATES = pytest.mark.filterwarnings("ignore:DateTimeField .* received a naive datetime")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("lookups", "bounded"),
    [
        ({"started_at__gte": "2000-01-01 00:00:00+00:00"}, False),  # bounds nothing
        (
            {"started_at__gte": "2000-01-01T00:00:00Z", "started_at__lt": "2000-01-02T00:00:00Z"},
            True,
        ),
        ({"started_at__date": "2026-12-01"}, True),
        ({"started_at__year": "2026", "started_at__month": "12"}, True),
        ({"started_at__year": "2026"}, False),  # a year is no narrower than the whole log
        ({"started_at__lt": "2026-12-01T00:00:00Z"}, False),  # everything before
        # Dates alone, which the lookup checks accept and the ORM reads as midnights in
        # the current time zone (with its naive-datetime warning): the span reads them so.
        pytest.param(
            {"started_at__gte": "2026-12-01", "started_at__lt": "2026-12-02"},
            True,
            marks=NAIVE_DATES,
        ),
        pytest.param(
            {"started_at__gte": "2000-01-01", "started_at__lt": "2026-12-02"},
            False,
            marks=NAIVE_DATES,
        ),
    ],
    ids=[
        "since-2000",
        "one-day-range",
        "a-date",
        "a-month",
        "a-year",
        "only-an-upper-bound",
        "a-range-of-dates",
        "a-wide-range-of-dates",
    ],
)
def test_a_lookup_span_counts_as_a_window_only_when_it_is_as_narrow(admin_client, lookups, bounded):
    """The unindexed filters and sorts need a span no wider than the widest window (30
    days): ``started_at__gte`` in the year 2000 turned them back on over the whole log."""
    url = reverse(f"{REQUEST_LOG}_changelist")
    response = admin_client.get(url, {**lookups, "started": "all", "error_code": "-32602"})
    assert response.status_code == (200 if bounded else 400)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "repeated",
    [
        {"started_at__gte": ["2000-01-01T00:00:00Z", "{recent}"], "site": "mcp"},
        {"started_at__gte": ["2000-01-01T00:00:00Z", "{recent}"], "o": "7"},
        {"started_at__gt": ["2000-01-01T00:00:00Z", "{recent}"], "error_code": "-32602"},
        {
            "started_at__gte": "{recent}",
            "started_at__lt": ["2100-01-01T00:00:00Z", "{recent}"],
            "declared_revision": "2099-01-01",
        },
    ],
    ids=["site", "sort", "error-code", "upper-bounds"],
)
def test_a_started_at_lookup_is_taken_once(admin_client, repeated):
    """Django matches any of a lookup's values, but the span checks read the last one:
    a lower bound in 2000 and another yesterday passed as a day's span, and a filter or a
    sort no index answers then read the whole log. A repeated ``started_at`` lookup is
    Django's 400; given once, the recent bound still narrows the list."""
    log_row(days_ago=400, site="mcp", target="old")
    recent = (timezone.now() - datetime.timedelta(days=1)).isoformat()

    def filled(value):
        if isinstance(value, list):
            return [item.replace("{recent}", recent) for item in value]
        return value.replace("{recent}", recent)

    query = {key: filled(value) for key, value in repeated.items()}
    url = reverse(f"{REQUEST_LOG}_changelist")
    assert admin_client.get(url, query).status_code == 400
    once = {key: value[-1] if isinstance(value, list) else value for key, value in query.items()}
    response = admin_client.get(url, once)
    assert response.status_code == 200
    assert "old" not in {row.target for row in response.context["cl"].result_list}
