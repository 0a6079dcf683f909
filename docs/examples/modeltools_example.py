"""Models as tools, the way the admin exposes them (docs/guides/modeltools.md);
tests/modeltools/ runs this file.

In a project this lives in an app's ``mcp.py`` on the default site: write
``@django_mcp.register(Book)`` where this file writes ``@django_mcp.register(Book, site=site)``.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.urls import path
from rest_framework import serializers

import django_mcp
from django_mcp import Context
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book

if TYPE_CHECKING:
    from django.db.models import QuerySet

site = MCPSite(name="modeltools-example")


# [docs:author]
# The smallest declaration: list and get, every field.
@django_mcp.register(Author, site=site)
class AuthorTools(django_mcp.ModelTools):
    fields = ["id", "name"]
    search_fields = ["name"]


# [/docs:author]


# [docs:book]
# A DRF serializer you already have: its fields, validation and representation are reused.
class BookSerializer(serializers.ModelSerializer[Book]):
    class Meta:
        model = Book
        fields = ["id", "isbn", "title", "author", "price", "published"]

    def validate_isbn(self, value: str) -> str:
        if not (value.isdigit() and len(value) == 13):
            raise serializers.ValidationError("An ISBN has 13 digits.")
        return value


@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    serializer_class = BookSerializer
    actions = ["list", "get", "create", "update", "delete"]  # writes are opt-in
    lookup_field = "isbn"  # book_get(isbn=...) rather than book_get(id=...)
    search_fields = ["title", "author__name"]
    list_filter = ["author"]  # only these fields can be filtered on
    ordering = ["title", "isbn"]
    list_per_page = 10
    tool_names = {"list": "search_books"}  # book_list is called search_books
    descriptions = {"delete": "Remove a book from the catalogue for good."}
    # Writes need the model's permissions, checked against the request's user.
    permission_required = {
        "create": "books.add_book",
        "update": "books.change_book",
        "delete": "books.delete_book",
    }

    def get_queryset(self, ctx: Context) -> QuerySet[Any]:
        # Rows the caller may reach: unpublished books only for staff.
        books = super().get_queryset(ctx)
        user = ctx.user
        if user is None or not user.is_staff:
            books = books.filter(published__isnull=False)
        return books


# [/docs:book]


urlpatterns = [path("mcp", site.urls)]
