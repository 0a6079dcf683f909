"""Who may use what (docs/guides/permissions.md); tests/test_permissions.py runs this file.

In a project these live in an app's ``mcp.py`` on the default site: drop the ``site``
(``@django_mcp.tool(...)``, ``@django_mcp.register(Book)``).
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from typing import Any

from django.urls import path
from rest_framework.permissions import IsAuthenticated

import django_mcp
from django_mcp import Context
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book

site = MCPSite(name="permissions-example")


# [docs:declarations]
# Django permissions, checked against the request's user (a list means all of them).
@site.tool(read_only=True, permission_required="books.view_book")
def count_books() -> int:
    """How many books the catalogue holds."""
    return Book.objects.count()


# Any check of the Context: here, staff only.
def is_staff(ctx: Context) -> bool:
    return bool(ctx.user is not None and ctx.user.is_active and ctx.user.is_staff)


@site.resource("reports://sales", mime_type="text/csv", permission=is_staff)
def sales_report() -> str:
    """This month's sales, for staff."""
    return "isbn,copies\n9780441013593,12\n"


@site.prompt(permission_required=["books.view_book", "books.change_book"])
def rewrite_blurb(isbn: str) -> str:
    """Ask for a better blurb, for editors."""
    return f"Rewrite the blurb of the book {isbn} in two sentences."


# [/docs:declarations]


# [docs:modeltools]
# ModelTools: the admin's own model permissions (view/add/change/delete_author) per action.
@django_mcp.register(Author, site=site)
class AuthorTools(django_mcp.ModelTools):
    fields = ["id", "name"]
    actions = ["list", "get", "create", "update", "delete"]
    permission_required = django_mcp.DEFAULT_PERMISSIONS


# DRF permission classes, and a has_permission hook for rules of your own.
@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    fields = ["id", "isbn", "title", "author", "price"]
    actions = ["list", "get", "update"]
    permission_classes = [IsAuthenticated]

    def has_permission(self, ctx: Context, action: str) -> bool:
        if action == "update" and not (ctx.user is not None and ctx.user.is_staff):
            return False
        return super().has_permission(ctx, action)


# [/docs:modeltools]


# [docs:site]
class StaffSite(MCPSite):
    """A site for staff only: to everyone else it looks empty."""

    def has_permission(self, spec: Any, context: Context | None) -> bool:
        user = context.user if context is not None else None
        is_staff = bool(user is not None and user.is_active and user.is_staff)
        return is_staff and super().has_permission(spec, context)


staff_site = StaffSite(name="staff")


@staff_site.tool(destructive=True)
def rebuild_search_index() -> str:
    """Rebuild the full-text index."""
    return "Rebuild scheduled."


# [/docs:site]

urlpatterns = [path("mcp", site.urls), path("staff/mcp", staff_site.urls)]
