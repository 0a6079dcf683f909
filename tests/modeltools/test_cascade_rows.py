"""A ``delete`` asks each row its cascade takes of a model whose ``ModelTools`` decides
row by row (``has_object_permission``), as the admin asks ``has_delete_permission(request,
obj)`` of each object ``get_deleted_objects`` finds. Asked only ``has_permission``, a caller
refused a token by its owner rule deleted it all the same by deleting its user."""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012
from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.urls import path
from rest_framework.permissions import BasePermission

import django_mcp
from django_mcp.auth.models import AccessToken
from django_mcp.sites import MCPSite
from tests.helpers import call_tool, result_of

site = MCPSite(name="modeltools-cascade-rows")


class OwnTokensOnly(BasePermission):
    def has_object_permission(self, request, view, obj):
        return obj.user_id == request.user.pk


class UserTools(django_mcp.ModelTools):
    fields = ["id", "username"]
    actions = ["list", "delete"]
    permission_required = django_mcp.DEFAULT_PERMISSIONS


class TokenTools(django_mcp.ModelTools):
    fields = ["id", "name"]
    actions = ["list", "get", "delete"]
    permission_classes = [OwnTokensOnly]


site.register(AccessToken, TokenTools)
site.register(AccessToken.user.field.related_model, UserTools)
urlpatterns = [path("mcp", site.urls)]
pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


def test_a_cascade_to_a_row_the_callers_object_permission_refuses_is_refused(
    client, django_user_model: Any
):
    victim = django_user_model.objects.create_user("victim")
    AccessToken.objects.issue(victim, name="ci")
    token_pk = AccessToken.objects.get(user=victim).pk
    boss = django_user_model.objects.create_user("boss", password="x")
    boss.user_permissions.add(*Permission.objects.filter(codename__in=["delete_user", "view_user"]))
    client.force_login(boss)

    # The token's own delete refuses the caller: the row is "not found" for them.
    direct = result_of(call_tool(client, "accesstoken_delete", {"id": token_pk}, path="/mcp"))
    assert direct["isError"] is True, direct
    assert AccessToken.objects.filter(pk=token_pk).exists()

    # Nor may deleting its user take it.
    via_cascade = result_of(call_tool(client, "user_delete", {"id": victim.pk}, path="/mcp"))
    assert via_cascade.get("isError") is True, via_cascade
    assert via_cascade["content"][0]["text"] == (
        "Cannot delete this user: it would also delete MCP access tokens, which you may not delete."
    )
    assert django_user_model.objects.filter(pk=victim.pk).exists()
    assert AccessToken.objects.filter(pk=token_pk).exists()


def test_a_cascade_to_rows_the_object_permission_allows_goes_ahead(client, django_user_model: Any):
    """The same caller deleting a user whose tokens it may delete (here: a user it is,
    as far as ``OwnTokensOnly`` can tell, the owner of): the rule is asked, not assumed."""
    boss = django_user_model.objects.create_user("boss", password="x")
    boss.user_permissions.add(*Permission.objects.filter(codename__in=["delete_user", "view_user"]))
    lonely = django_user_model.objects.create_user("lonely")  # no token: nothing to ask
    client.force_login(boss)
    result = result_of(call_tool(client, "user_delete", {"id": lonely.pk}, path="/mcp"))
    assert result["structuredContent"] == {"deleted": True, "id": lonely.pk}

    AccessToken.objects.issue(boss, name="mine")
    result = result_of(call_tool(client, "user_delete", {"id": boss.pk}, path="/mcp"))
    assert result["structuredContent"] == {"deleted": True, "id": boss.pk}
    assert not AccessToken.objects.filter(user_id=boss.pk).exists()
