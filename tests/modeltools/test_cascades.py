"""A ``delete`` that would take rows the caller may not delete is refused, as the admin
refuses it (``get_deleted_objects``).

Deleting a user deletes their access tokens (``on_delete=CASCADE``). The site serves
both models with the admin's own permissions (``DEFAULT_PERMISSIONS``): a caller who may
delete users but not tokens deleted a user's tokens through the cascade all the same,
which the admin refuses ("your account doesn't have permission to delete the following
types of objects"). A model the site does not serve through a gated ``ModelTools`` is
not asked about, as the admin asks only about the models it serves.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import Permission
from django.urls import path

import django_mcp
from django_mcp.auth.models import AccessToken
from django_mcp.sites import MCPSite
from tests.helpers import call_tool, result_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.test import Client

site = MCPSite(name="modeltools-cascades")
open_site = MCPSite(name="modeltools-cascades-open")


class UserTools(django_mcp.ModelTools):
    fields = ["id", "username"]
    actions = ["list", "delete"]
    permission_required = django_mcp.DEFAULT_PERMISSIONS


class TokenTools(django_mcp.ModelTools):
    fields = ["id", "name"]
    permission_required = django_mcp.DEFAULT_PERMISSIONS


class OpenTokenTools(django_mcp.ModelTools):
    fields = ["id", "name"]


site.register(AccessToken, TokenTools)
open_site.register(AccessToken, OpenTokenTools)
for served in (site, open_site):
    served.register(AccessToken.user.field.related_model, UserTools)

urlpatterns = [path("mcp", site.urls), path("open/mcp", open_site.urls)]
pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


def manager(django_user_model: Any, *codenames: str) -> User:
    user: User = django_user_model.objects.create_user("manager", password="x")
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=["delete_user", "view_user", *codenames])
    )
    return user


def delete(client: Client, user: User, at: str = "/mcp") -> dict[str, Any]:
    return result_of(call_tool(client, "user_delete", {"id": user.pk}, path=at))


def test_a_delete_that_would_take_rows_the_caller_may_not_delete_is_refused(
    client: Client, django_user_model: Any
) -> None:
    victim = django_user_model.objects.create_user("victim")
    AccessToken.objects.issue(victim, name="ci")
    client.force_login(manager(django_user_model))

    refused = delete(client, victim)

    assert refused["isError"] is True
    assert refused["content"][0]["text"] == (
        "Cannot delete this user: it would also delete MCP access tokens, which you may not delete."
    )
    assert django_user_model.objects.filter(pk=victim.pk).exists()
    assert AccessToken.objects.filter(user=victim).count() == 1


def test_a_delete_goes_ahead_when_the_caller_may_delete_what_it_takes(
    client: Client, django_user_model: Any
) -> None:
    victim = django_user_model.objects.create_user("victim")
    AccessToken.objects.issue(victim, name="ci")
    lonely = django_user_model.objects.create_user("lonely")  # takes no token with it
    client.force_login(manager(django_user_model))  # may not delete tokens
    assert delete(client, lonely)["structuredContent"] == {"deleted": True, "id": lonely.pk}

    granted = django_user_model.objects.get(username="manager")
    granted.user_permissions.add(
        Permission.objects.get(codename="delete_accesstoken", content_type__app_label="django_mcp")
    )
    client.force_login(granted)
    assert delete(client, victim)["structuredContent"] == {"deleted": True, "id": victim.pk}
    assert not AccessToken.objects.filter(user_id=victim.pk).exists()


def test_a_model_served_without_permissions_is_not_asked_about(
    client: Client, django_user_model: Any
) -> None:
    victim = django_user_model.objects.create_user("victim")
    AccessToken.objects.issue(victim, name="ci")
    client.force_login(manager(django_user_model))
    result = delete(client, victim, at="/open/mcp")
    assert result["structuredContent"] == {"deleted": True, "id": victim.pk}
