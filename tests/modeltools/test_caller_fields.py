"""A serializer whose writable fields depend on the caller (its ``get_fields`` reads the
context, a common DRF pattern) is asked with the caller's context by ``update`` too.

``create`` built its serializer with the context DRF's views give (``request``,
``mcp_context``), but ``update`` decided which arguments it takes from a serializer built
without any: a field writable for staff only was refused to staff as an unknown argument
by ``update`` while ``create`` took it.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path
from rest_framework import serializers

import django_mcp
from django_mcp.sites import MCPSite
from testproject.books.models import Book
from tests.helpers import call_tool, result_of

if TYPE_CHECKING:
    from django.test import Client

site = MCPSite(name="modeltools-caller-fields")


class PricedByStaffSerializer(serializers.ModelSerializer[Book]):
    """The price is staff's to set: read-only for anyone else."""

    class Meta:
        model = Book
        fields = ["id", "isbn", "title", "author", "price"]

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        ctx = self.context.get("mcp_context")
        if not (ctx is not None and ctx.user is not None and ctx.user.is_staff):
            fields["price"].read_only = True
        return fields


@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    serializer_class = PricedByStaffSerializer
    actions = ["create", "update"]


urlpatterns = [path("mcp", site.urls)]
pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


def test_update_takes_the_fields_the_caller_may_write(
    client: Client, catalogue: Any, boss: Any, clerk: Any
) -> None:
    dune = catalogue["books"][0]
    client.force_login(boss)
    updated = result_of(call_tool(client, "book_update", {"id": dune.pk, "price": "1.00"}))
    assert updated.get("isError") is None, updated
    assert Book.objects.get(pk=dune.pk).price == Decimal("1.00")

    client.force_login(clerk)
    refused = result_of(call_tool(client, "book_update", {"id": dune.pk, "price": "0.50"}))
    assert refused["content"][0]["text"] == "Unknown arguments: price"
    assert Book.objects.get(pk=dune.pk).price == Decimal("1.00")
