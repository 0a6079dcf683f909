"""Refusals a DRF permission class raises rather than returns: the refusal they are.

DRF's views answer ``Http404`` 404 and ``PermissionDenied`` 403, and its own classes
raise them: ``DjangoObjectPermissions`` raises ``Http404`` for a row the user may not
read once its ``perms_map`` asks a view permission for ``GET`` (what DRF's guide tells
a project to do to restrict reads). Asked about a ``ModelTools`` action they were
uncaught, and the call was -32603 "Internal error" with a traceback logged, rather than
the "not found" of a refused row (server/tools.mdx, "Error Handling").
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission, DjangoObjectPermissions

import django_mcp
from django_mcp.sites import MCPSite
from testproject.books.models import Book
from tests.helpers import call_tool, mcp_post, result_of

if TYPE_CHECKING:
    from django.test import Client

site = MCPSite(name="modeltools-refusals")


class ViewObjectPermissions(DjangoObjectPermissions):
    """DRF's object permissions, reads included (DRF's documented way to restrict them)."""

    perms_map = {**DjangoObjectPermissions.perms_map, "GET": ["%(app_label)s.view_%(model_name)s"]}


class NoDeletesWithAMessage(BasePermission):
    """Refuses deletes by raising, to say why (as a DRF view would show it)."""

    def has_permission(self, request: Any, view: Any) -> bool:
        if view.action == "delete":
            raise PermissionDenied("Books are never deleted.")
        return True


@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    fields = ["id", "isbn", "title"]
    actions = ["list", "get", "update", "delete"]
    permission_classes = [ViewObjectPermissions, NoDeletesWithAMessage]


urlpatterns = [path("mcp", site.urls)]
pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_row_an_object_permission_refuses_by_raising_is_not_found(
    client: Client, catalogue: Any, editor: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The editor holds the model's permissions but none on the row (Django's
    ``ModelBackend`` grants no object permission): ``DjangoObjectPermissions`` raises
    ``Http404``. The row is "not found", word for word as a missing one."""
    client.force_login(editor)
    dune = catalogue["books"][0]
    for name, arguments in [("book_get", {}), ("book_update", {"title": "Dune!"})]:
        refused = result_of(call_tool(client, name, {"id": dune.pk, **arguments}))
        missing = result_of(call_tool(client, name, {"id": 999_999, **arguments}))
        assert refused["isError"] is True, refused
        assert refused["content"][0]["text"] == missing["content"][0]["text"].replace(
            "999999", str(dune.pk)
        )
    assert Book.objects.get(pk=dune.pk).title == "Dune"
    assert errors_logged(caplog) == []


def test_an_action_a_permission_class_refuses_by_raising_is_hidden(
    client: Client, catalogue: Any, boss: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A class raising DRF's ``PermissionDenied`` from ``has_permission`` refuses the
    action: the tool is not listed and is called like an unknown one (-32602), as any
    refused action is; it was -32603 for every call, and ``tools/list`` with it."""
    client.force_login(boss)  # a superuser: every object permission is granted
    listed = result_of(mcp_post(client, "tools/list"))["tools"]
    assert {tool["name"] for tool in listed} == {"book_list", "book_get", "book_update"}
    response = call_tool(client, "book_delete", {"id": catalogue["books"][0].pk})
    assert response.json()["error"]["code"] == -32602
    assert Book.objects.count() == len(catalogue["books"])
    assert (
        result_of(call_tool(client, "book_get", {"id": catalogue["books"][0].pk}))[
            "structuredContent"
        ]["title"]
        == "Dune"
    )
    assert errors_logged(caplog) == []
