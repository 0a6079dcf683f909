"""A ``delete`` whose cascade takes rows of a model served with ``scopes_required`` asks the
caller's token for that model's ``delete`` scopes too (basic/authorization.mdx; ADR 0005):
a token refused ``accesstoken_delete`` for want of its scope must not delete the same rows
by deleting their user."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from django.contrib.auth import get_user_model

import django_mcp
from django_mcp.auth.models import AccessToken
from tests.auth.conftest import bearer
from tests.helpers import call_tool, result_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.test import Client

    from django_mcp.sites import MCPSite

pytestmark = pytest.mark.django_db


class UserTools(django_mcp.ModelTools):
    fields: ClassVar = ["id", "username"]
    actions: ClassVar = ["delete"]
    scopes_required: ClassVar = {"delete": "users:delete"}


class TokenTools(django_mcp.ModelTools):
    fields: ClassVar = ["id", "name"]
    actions: ClassVar = ["delete"]
    scopes_required: ClassVar = {"delete": "tokens:delete"}


@pytest.fixture
def served(auth_site: MCPSite) -> MCPSite:
    auth_site.register(AccessToken, TokenTools)
    auth_site.register(get_user_model(), UserTools)
    return auth_site


def test_a_cascade_asks_the_scopes_of_the_rows_it_takes(
    client: Client, served: MCPSite, issue: Callable[..., str]
) -> None:
    victim: Any = get_user_model().objects.create_user("victim")
    row, _ = AccessToken.objects.issue(victim, name="ci")
    token = bearer(issue("users:delete"))

    direct = call_tool(client, "accesstoken_delete", {"id": row.pk}, headers=token)
    assert direct.status_code == 403  # insufficient_scope: tokens:delete

    refused = result_of(call_tool(client, "user_delete", {"id": victim.pk}, headers=token))
    assert refused.get("isError") is True, refused
    assert AccessToken.objects.filter(pk=row.pk).exists()
    assert get_user_model().objects.filter(pk=victim.pk).exists()


def test_a_token_with_both_scopes_deletes_the_user_and_the_rows(
    client: Client, served: MCPSite, issue: Callable[..., str]
) -> None:
    victim: Any = get_user_model().objects.create_user("victim")
    row, _ = AccessToken.objects.issue(victim, name="ci")
    token = bearer(issue("users:delete tokens:delete"))
    done = result_of(call_tool(client, "user_delete", {"id": victim.pk}, headers=token))
    assert done["structuredContent"] == {"deleted": True, "id": victim.pk}
    assert not AccessToken.objects.filter(pk=row.pk).exists()
