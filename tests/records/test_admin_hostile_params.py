"""The request log's admin pages and the dashboard, given URL parameters no row can match:
an empty page, never a 500 and never a query the database refuses.

A hostile probe found three 500s in django-mcp's own code (Django's generic lookups, such as
``?site=%00`` on a plain column, fail in Django itself): the method filter and the
dashboard's site with a NUL (PostgreSQL refuses NUL in a query; rows are stored with NUL
replaced), and a search over 50,000 characters (SQLite's ``LIKE`` limit).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from django_mcp.requestlog.models import RequestLog

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/django_mcp/requestlog/"
DASHBOARD = "/admin/django_mcp/dashboard/"
TABLE = RequestLog._meta.db_table


@pytest.fixture
def staff(admin_user: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    return client


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
