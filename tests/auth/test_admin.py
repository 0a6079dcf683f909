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
