"""The access-token admin: a new token is shown once, then only its prefix; revocation."""

from __future__ import annotations

import re
from typing import Any

import pytest
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
