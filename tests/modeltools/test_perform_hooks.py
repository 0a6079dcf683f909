"""``ModelTools.perform_create`` and ``perform_update``: where a project sets what the caller
does not send, as DRF's generic views do (``serializer.save(owner=request.user)``).

server/tools.mdx, "Error Handling": a failure the tool reports is a result with
``isError: true``; what the hook wrote before it is rolled back with the action's
transaction. The module is its own URLconf: a site at /mcp with one ModelTools over ``Book``.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from django.urls import path
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied

import django_mcp
from django_mcp import Context, ToolError
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book
from tests.helpers import call_tool, result_of

if TYPE_CHECKING:
    from django.test import Client

site = MCPSite(name="modeltools-perform-hooks")


class BookSerializer(serializers.ModelSerializer[Book]):
    class Meta:
        model = Book
        fields = ["id", "isbn", "title", "author", "price"]
        read_only_fields = ["price"]  # set by the server, never sent


@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    serializer_class = BookSerializer
    actions = ["create", "update"]

    def perform_create(self, serializer: Any, ctx: Context) -> None:
        title = serializer.validated_data["title"]
        if title == "invalid":  # DRF's way to refuse: a 400 there, a tool error here
            raise serializers.ValidationError({"title": ["This title is taken."]})
        if title == "forbidden":
            raise PermissionDenied("Only editors may add this book.")
        if title == "forbidden by field":
            raise PermissionDenied({"owner": "You do not own this shelf."})
        if title == "django forbids":
            raise DjangoPermissionDenied("Not on this shelf.")
        if title == "gone":
            raise Http404("No such shelf.")
        if serializer.validated_data["title"] == "refuse":
            serializer.save(price="1.00")  # written, then undone with the transaction
            raise ToolError("refused by perform_create")
        serializer.save(price="4.20", title=f"{serializer.validated_data['title']} ({ctx.user})")

    def perform_update(self, serializer: Any, ctx: Context) -> None:
        serializer.save(title=f"{serializer.validated_data['title']} (edited by {ctx.user})")


urlpatterns = [path("mcp", site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


@pytest.fixture
def signed_in(client: Client, django_user_model: Any) -> Client:
    client.force_login(django_user_model.objects.create(username="ada", is_superuser=True))
    return client


def test_perform_create_sets_what_the_caller_does_not_send(signed_in: Client) -> None:
    author = Author.objects.create(name="Frank Herbert")
    arguments = {"isbn": "9780441013593", "title": "Dune", "author": author.pk}

    row = result_of(call_tool(signed_in, "book_create", arguments))["structuredContent"]

    assert (row["title"], row["price"]) == ("Dune (ada)", "4.20")
    assert Book.objects.get(isbn="9780441013593").title == "Dune (ada)"


def test_perform_update_saves_through_the_hook(signed_in: Client) -> None:
    author = Author.objects.create(name="Frank Herbert")
    book = Book.objects.create(isbn="9780441013593", title="Dune", author=author)

    row = result_of(call_tool(signed_in, "book_update", {"id": book.pk, "title": "Dune II"}))

    assert row["structuredContent"]["title"] == "Dune II (edited by ada)"


def test_a_tool_error_in_perform_create_is_a_result_and_undoes_the_write(
    signed_in: Client,
) -> None:
    author = Author.objects.create(name="Frank Herbert")
    arguments = {"isbn": "9780441013593", "title": "refuse", "author": author.pk}

    result = result_of(call_tool(signed_in, "book_create", arguments))

    assert result["isError"] is True
    assert result["content"][0]["text"] == "refused by perform_create"
    assert not Book.objects.exists()


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ("invalid", "Invalid book: title: This title is taken."),
        ("forbidden", "Only editors may add this book."),
        ("forbidden by field", "owner: You do not own this shelf."),
        ("django forbids", "Not on this shelf."),
        ("gone", "No such shelf."),
    ],
)
def test_a_drf_refusal_in_a_hook_is_a_tool_error(
    signed_in: Client, title: str, message: str
) -> None:
    """DRF's views answer these 400, 403 and 404; unmapped they were -32603 internal
    errors, and a detail that is not a string is written out, not its repr."""
    author = Author.objects.create(name="Frank Herbert")
    arguments = {"isbn": "9780441013593", "title": title, "author": author.pk}

    result = result_of(call_tool(signed_in, "book_create", arguments))

    assert result["isError"] is True
    assert result["content"][0]["text"] == message
    assert not Book.objects.exists()
