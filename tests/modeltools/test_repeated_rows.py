"""A key that names several rows, each repeated by a join of ``get_queryset``.

A ``get_queryset`` scoping rows through a many-valued relation repeats each row once per
match (the guide says so, and that ``get``, ``update`` and ``delete`` work either way). A
lookup reads at most 21 rows to tell one row from several, as ``QuerySet.get`` does: when
the first row alone fills those 21 with its repeats, the second row that shares the key was
never read, and the call acted on the first, a guess the guide promises never to make.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.db.models import QuerySet
from django.urls import path

from django_mcp import ModelTools
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book
from tests.helpers import assert_error, call_tool, mcp_post, result_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from django.test import Client

    from django_mcp import Context

site = MCPSite(name="modeltools-repeated-rows")


class AuthorsWithBooks(ModelTools):
    """Authors found by name (which two may share), scoped to those with a book: a join
    that repeats an author once per book, without ``distinct()``."""

    fields = ("id", "name")
    actions = ("get", "update")
    lookup_field = "name"
    resource_uri = "writers://{name}"

    def get_queryset(self, ctx: Context) -> QuerySet[Any]:
        return super().get_queryset(ctx).filter(books__price__gte=0).order_by("pk")


urlpatterns = [path("mcp", site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    """Registered for each test only: its row watcher would announce every author's
    change to other modules' tests."""
    site.register(Author, AuthorsWithBooks)
    yield
    site.unregister(Author)


def tool_error(response: Any) -> str:
    result = result_of(response)
    assert result.get("isError") is True, result
    text: str = result["content"][0]["text"]
    return text


@pytest.fixture
def namesakes() -> tuple[Author, Author]:
    """Two authors named "Smith": the first with 25 books, the second with one."""
    first, second = Author.objects.create(name="Smith"), Author.objects.create(name="Smith")
    for n in range(25):
        Book.objects.create(isbn=f"{n:013d}", title=f"Book {n}", author=first)
    Book.objects.create(isbn="9" * 13, title="Other", author=second)
    return first, second


@pytest.mark.usefixtures("namesakes")
def test_a_key_naming_two_rows_each_repeated_by_a_join_is_a_tool_error(client: Client) -> None:
    assert tool_error(call_tool(client, "author_get", {"name": "Smith"})) == (
        "2 authors have name 'Smith'."
    )
    assert tool_error(call_tool(client, "author_update", {"name": "Smith"})) == (
        "2 authors have name 'Smith'."
    )
    read = mcp_post(client, "resources/read", {"uri": "writers://Smith"})
    assert assert_error(read, 200, -32602)["data"] == {"uri": "writers://Smith"}


def test_one_row_repeated_by_a_join_is_still_one_row(
    client: Client, namesakes: tuple[Author, Author]
) -> None:
    first, second = namesakes
    second.name = "Jones"
    second.save()

    result = result_of(call_tool(client, "author_get", {"name": "Smith"}))

    assert result["structuredContent"] == {"id": first.pk, "name": "Smith"}
    updated = result_of(call_tool(client, "author_update", {"name": "Smith"}))
    assert updated["structuredContent"] == {"id": first.pk, "name": "Smith"}
