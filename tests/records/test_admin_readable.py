"""The request-log admin reads well: plural names, durations for people, a link to the
user, the new fields on the detail page, a recent window by default
(docs/guides/records.md, "The admin")."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import reverse

from django_mcp.requestlog.admin import format_duration
from django_mcp.requestlog.models import RequestLog
from tests.records.support import log_row

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:django_mcp_requestlog_changelist"


def test_the_changelist_counts_entries_with_a_plural_name(admin_client):
    for _ in range(3):
        log_row()

    response = admin_client.get(reverse(CHANGELIST))

    assert b"3 request log entries" in response.content
    assert RequestLog._meta.verbose_name_plural == "request log entries"


@pytest.mark.parametrize(
    ("ms", "shown"),
    [(0.3022280000095634, "0.30 ms"), (12.345, "12.3 ms"), (1234.5, "1.23 s")],
)
def test_durations_are_formatted_for_people(ms, shown):
    assert format_duration(ms) == shown


def test_the_detail_page_shows_a_formatted_duration_and_the_new_fields(admin_client):
    row = log_row(
        duration_ms=0.3022280000095634,
        error_message="Unknown tool: secret",
        permission_denied=True,
        remote_addr="198.51.100.7",
        user_agent="inspector/0.9",
    )

    page = admin_client.get(reverse("admin:django_mcp_requestlog_change", args=[row.pk]))
    content = page.content.decode()

    assert "0.30 ms" in content
    assert "0.3022" not in content
    for shown in ("Unknown tool: secret", "198.51.100.7", "inspector/0.9", "Permission denied"):
        assert shown in content


def test_the_user_links_to_the_users_admin_page(admin_client, admin_user):
    log_row(user=admin_user, username=admin_user.get_username())

    content = admin_client.get(reverse(CHANGELIST)).content.decode()

    url = reverse("admin:auth_user_change", args=[admin_user.pk])
    assert f'<a href="{url}">{admin_user.get_username()}</a>' in content


def test_without_a_user_admin_the_username_is_plain_text(admin_client, admin_user):
    log_row(user=admin_user, username=admin_user.get_username())
    user_model = get_user_model()
    user_admin = admin.site._registry.pop(user_model)
    try:
        content = admin_client.get(reverse(CHANGELIST)).content.decode()
    finally:
        admin.site._registry[user_model] = user_admin

    assert f">{admin_user.get_username()}<" in content
    assert "/auth/user/" not in content


def test_the_list_shows_the_last_24_hours_unless_another_window_is_chosen(admin_client):
    log_row(target="recent")
    log_row(days_ago=2, target="two_days_old")
    log_row(days_ago=40, target="forty_days_old")

    def targets(**query):
        response = admin_client.get(reverse(CHANGELIST), query)
        return {row.target for row in response.context["cl"].result_list}

    assert targets() == {"recent"}
    assert targets(started="7d") == {"recent", "two_days_old"}
    assert targets(started="all") == {"recent", "two_days_old", "forty_days_old"}
    assert targets(q="two", started="all") == {"two_days_old"}


def test_the_permission_denied_filter(admin_client):
    log_row(target="hidden", permission_denied=True)
    log_row(target="open")

    response = admin_client.get(reverse(CHANGELIST), {"permission_denied__exact": "1"})

    assert {row.target for row in response.context["cl"].result_list} == {"hidden"}


def test_search_is_by_name_prefix(admin_client):
    log_row(target="search_books", client_name="inspector")
    log_row(target="get_book", client_name="claude")

    def targets(q):
        response = admin_client.get(reverse(CHANGELIST), {"q": q})
        return {row.target for row in response.context["cl"].result_list}

    assert targets("search") == {"search_books"}
    assert targets("insp") == {"search_books"}
    assert targets("books") == set()  # a prefix, not a substring: the index answers it
