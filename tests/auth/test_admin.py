"""The access-token admin: a new token is shown once, then only its prefix; revocation."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from django_mcp.auth.models import AccessToken, digest

pytestmark = pytest.mark.django_db


def test_the_add_view_shows_the_token_once(admin_client: Any, admin_user: Any) -> None:
    response = admin_client.post(
        reverse("admin:django_mcp_accesstoken_add"),
        {"user": admin_user.pk, "name": "laptop", "scopes": "b:write  a:read"},
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    shown = re.search(r'id="mcp-access-token">(mcp_[\w-]+)<', response.content.decode())
    assert shown is not None
    token = AccessToken.objects.get()
    assert token.digest == digest(shown[1])
    assert token.scopes == "a:read b:write"
    change = admin_client.get(reverse("admin:django_mcp_accesstoken_change", args=[token.pk]))
    assert shown[1] not in change.content.decode()
    assert token.prefix in change.content.decode()


def test_the_revoke_action_revokes(admin_client: Any, admin_user: Any) -> None:
    token, _ = AccessToken.objects.issue(admin_user)
    admin_client.post(
        reverse("admin:django_mcp_accesstoken_changelist"),
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    token.refresh_from_db()
    assert token.revoked_at is not None


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    """A staff user who may add and see tokens, and nothing else."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("staff", password="pw", is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="django_mcp",
            codename__in=["add_accesstoken", "view_accesstoken"],
        )
    )
    return user


def test_adding_a_token_does_not_let_staff_issue_one_for_someone_else(
    client: Any, staff: Any, admin_user: Any
) -> None:
    """A token acts as its user: "add access token" alone must not turn a staff user into
    a superuser by issuing a superuser's token (hostile review)."""
    client.force_login(staff)
    response = client.post(
        reverse("admin:django_mcp_accesstoken_add"),
        {"user": admin_user.pk, "name": "mine", "scopes": "books:write"},
    )
    assert response.status_code == 200
    assert "mcp-access-token" not in response.content.decode()
    assert not AccessToken.objects.exists()
    own = client.post(
        reverse("admin:django_mcp_accesstoken_add"), {"user": staff.pk, "name": "laptop"}
    )
    assert "mcp-access-token" in own.content.decode()
    assert AccessToken.objects.get().user == staff


def test_the_add_form_starts_with_oneself(client: Any, staff: Any) -> None:
    client.force_login(staff)
    page = client.get(reverse("admin:django_mcp_accesstoken_add"))
    assert page.context["adminform"].form.initial["user"] == staff.pk


def test_the_add_form_names_no_one_else_to_staff_who_issue_only_for_themselves(
    client: Any, staff: Any, django_user_model: Any
) -> None:
    """Django's raw-id widget shows the name of whichever user id it is given, read
    through the user model's own manager: ``?user=<pk>`` on the add page, or a refused
    POST naming another id, showed that user's name to staff who may not see users
    (hostile review); they could walk the ids and list every username."""
    hidden = django_user_model.objects.create_user("hidden-name-7f3a", password="pw")
    client.force_login(staff)
    add = reverse("admin:django_mcp_accesstoken_add")

    page = client.get(add, {"user": hidden.pk})
    refused = client.post(add, {"user": hidden.pk, "name": "mine"})

    for response in (page, refused):
        assert response.status_code == 200
        assert "hidden-name-7f3a" not in response.content.decode()
    assert "staff" in page.content.decode()  # their own name: the one choice
    assert refused.context["adminform"].form.errors["user"]


def test_the_issuing_permission_lets_staff_name_another_user(
    client: Any, staff: Any, admin_user: Any
) -> None:
    from django.contrib.auth.models import Permission

    staff.user_permissions.add(Permission.objects.get(codename="issue_accesstoken_for_others"))
    client.force_login(staff)
    client.post(reverse("admin:django_mcp_accesstoken_add"), {"user": admin_user.pk})
    assert AccessToken.objects.get().user == admin_user


def test_seeing_tokens_is_not_enough_to_revoke_them(
    client: Any, staff: Any, admin_user: Any
) -> None:
    """Revoking cannot be undone: it takes "change access token", like editing would."""
    token, _ = AccessToken.objects.issue(admin_user)
    client.force_login(staff)
    listing = client.get(reverse("admin:django_mcp_accesstoken_changelist"))
    assert 'value="revoke"' not in listing.content.decode()
    client.post(
        reverse("admin:django_mcp_accesstoken_changelist"),
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    token.refresh_from_db()
    assert token.revoked_at is None


@pytest.fixture
def token_list(admin_user: Any) -> Client:
    """The superuser on the token list (one token), 500s answered rather than raised."""
    AccessToken.objects.issue(admin_user, name="laptop")
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    return client


LIST = "/admin/django_mcp/accesstoken/"


@pytest.mark.parametrize(
    "query",
    [
        {"user": "99999999999999999999"},  # SQLite: OverflowError
        {"user__id__exact": "-99999999999999999999"},
        {"id__in": "99999999999999999999"},  # no filter offers it
        {"name": "a\x00b"},  # PostgreSQL: NUL
        {"scopes": "a\x00b"},
        {"expires_at__gte": "0001-01-01 00:00:00+05:00"},  # year 0 in UTC
        {"revoked_at__isnull": "a\x00b"},
    ],
    ids=[
        "user-20-digits",
        "user-exact-20-digits",
        "id-in",
        "name-nul",
        "scopes-nul",
        "expires-year-0",
        "isnull-nul",
    ],
)
def test_the_token_list_refuses_what_no_row_can_hold(token_list: Client, query: Any) -> None:
    assert token_list.get(LIST, query).status_code == 400


def test_a_token_search_no_row_can_match_finds_nothing(token_list: Client) -> None:
    # SQLite refuses a LIKE pattern over 50,000 bytes. (A search with NUL never gets here:
    # Django's search form refuses it and lists everything.)
    response = token_list.get(LIST, {"q": "x" * 50_001})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 0


def test_the_token_list_still_filters_and_searches(token_list: Client, admin_user: Any) -> None:
    for query, count in [
        ({"q": "laptop"}, 1),
        ({"q": "admin laptop"}, 1),
        ({"user__id__exact": str(admin_user.pk)}, 1),
        ({"revoked_at__isnull": "True"}, 1),
        ({"expires_at__gte": "2020-01-01 00:00:00+00:00"}, 0),
    ]:
        response = token_list.get(LIST, query)
        assert response.status_code == 200, query
        assert response.context["cl"].result_count == count, query


@pytest.mark.parametrize(
    ("zone", "day", "time"),
    [("America/New_York", "9999-12-31", "23:59:59"), ("Asia/Tokyo", "0001-01-01", "00:00:00")],
    ids=["after-year-9999", "before-year-1"],
)
def test_an_expiry_past_the_databases_range_in_utc_is_refused(
    admin_user: Any, settings: Any, zone: str, day: str, time: str
) -> None:
    """Never expires typed as 9999-12-31 west of UTC is year 10000 in UTC: SQLite
    overflowed (a 500), PostgreSQL stored it and then failed to read it back, so every
    later visit to the token list was a 500. The form says why instead."""
    settings.TIME_ZONE = zone
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:django_mcp_accesstoken_add"),
        {"user": admin_user.pk, "name": "forever", "expires_at_0": day, "expires_at_1": time},
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors["expires_at"]
    assert not AccessToken.objects.exists()
    assert client.get(reverse("admin:django_mcp_accesstoken_changelist")).status_code == 200


def test_issue_refuses_an_expiry_past_the_databases_range_in_utc(admin_user: Any) -> None:
    """``AccessToken.objects.issue`` is what the admin and ``mcp_create_token`` call, and
    a project's own code too: a year-10000 expiry became a row no token list could read
    back on PostgreSQL. It is a ValueError now, and no row is written."""
    import datetime
    import zoneinfo

    west = zoneinfo.ZoneInfo("America/New_York")
    never = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=west)
    with pytest.raises(ValueError, match="out of the range"):
        AccessToken.objects.issue(admin_user, name="forever", expires_at=never)
    assert not AccessToken.objects.exists()
