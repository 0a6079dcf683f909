"""A tool error naming a lookup value names it as the model sent it, not as Python's
``repr`` of the converted value.

server/tools.mdx, "Error Handling": a tool execution error carries a message the model
can act on. A key converted by its field (a date, a decimal, a UUID) was quoted with
``repr``: ``No book has published datetime.date(2000, 1, 9).`` names a value in Python's
syntax, which the model never wrote and cannot send back.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path

import django_mcp
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book
from tests.helpers import call_tool, result_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from django.test import Client

site = MCPSite(name="modeltools-key-messages")


class BooksByDay(django_mcp.ModelTools):
    """Books found by publication day (one a day in this shop) or by price."""

    fields = ("id", "isbn", "title", "price", "published")
    actions = ("get", "delete")
    lookup_field = "published"


urlpatterns = [path("mcp", site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    """Registered for each test only: its non-unique ``lookup_field`` is what check W017
    warns of, and the project's checks run with every site registered."""
    site.register(Book, BooksByDay)
    yield
    site.unregister(Book)


def tool_error(response: Any) -> str:
    result = result_of(response)
    assert result.get("isError") is True, result
    text: str = result["content"][0]["text"]
    return text


def test_a_converted_key_is_named_as_sent(client: Client) -> None:
    assert tool_error(call_tool(client, "book_get", {"published": "2000-01-09"})) == (
        "No book has published '2000-01-09'."
    )
    assert tool_error(call_tool(client, "book_delete", {"published": "2000-01-09"})) == (
        "No book has published '2000-01-09'."
    )


def test_a_key_naming_several_rows_is_named_as_sent(client: Client) -> None:
    author = Author.objects.create(name="Frank Herbert")
    day = datetime.date(1965, 8, 1)
    for isbn in ("9780441013593", "9780340960196"):
        Book.objects.create(isbn=isbn, title="Dune", author=author, published=day)

    message = tool_error(call_tool(client, "book_get", {"published": "1965-08-01"}))

    assert message == "2 books have published '1965-08-01'."
