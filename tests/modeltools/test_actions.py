"""The five ModelTools actions through tools/call (server/tools.mdx).

Bad input is a tool execution error (``isError: true`` naming what is wrong), never a
protocol error: server/tools.mdx, "Error Handling". The module is its
own URLconf: the example site of docs/examples/modeltools_example.py at /example/mcp, and a
fresh site at /mcp whose author tools write through a serializer that can fail after saving.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

import json
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path
from jsonschema import Draft202012Validator
from rest_framework import serializers

import django_mcp
from django_mcp import ToolError
from django_mcp.sites import MCPSite
from docs.examples import modeltools_example
from testproject.books.models import Author, Book
from tests.helpers import call_tool, mcp_post, result_of

if TYPE_CHECKING:
    from django.test import Client

EXAMPLE = "/example/mcp"

site = MCPSite(name="modeltools-actions")


class AuthorSerializer(serializers.ModelSerializer[Author]):
    """Refuses, after saving, any author called "fail": the write must be rolled back."""

    class Meta:
        model = Author
        fields = ["id", "name"]

    def create(self, validated_data: dict[str, Any]) -> Author:
        author = super().create(validated_data)
        if author.name == "fail":
            raise ToolError("refused after saving")
        return author

    def update(self, instance: Author, validated_data: dict[str, Any]) -> Author:
        author = super().update(instance, validated_data)
        if author.name == "fail":
            raise ToolError("refused after saving")
        return author


@django_mcp.register(Author, site=site)
class AuthorTools(django_mcp.ModelTools):
    serializer_class = AuthorSerializer
    actions = ["list", "get", "create", "update", "delete"]


urlpatterns = [path("mcp", site.urls), path("example/mcp", modeltools_example.site.urls)]

pytestmark = pytest.mark.urls(__name__)


def call(client: Client, name: str, arguments: dict[str, Any], *, at: str = EXAMPLE) -> Any:
    return result_of(call_tool(client, name, arguments, path=at))


def structured(result: dict[str, Any]) -> Any:
    """The structured result, after checking the text block repeats it (server/tools.mdx,
    "Structured Content": SHOULD also return the serialized JSON in a TextContent block)."""
    assert result.get("isError") is not True, result
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result["structuredContent"]


def tool_error(result: dict[str, Any]) -> str:
    """The message of a tool execution error."""
    assert result["isError"] is True, result
    text: str = result["content"][0]["text"]
    return text


def output_schema(client: Client, name: str, *, at: str = EXAMPLE) -> dict[str, Any]:
    listed = result_of(mcp_post(client, "tools/list", path=at))["tools"]
    schema: dict[str, Any] = next(t for t in listed if t["name"] == name)["outputSchema"]
    return schema


# -- list ----------------------------------------------------------------------------------


def test_list_pages_through_the_rows_in_order(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Structured Content": structuredContent carries the page; the
    rows come in the declared ordering (title, then isbn)."""
    first = structured(call(client, "search_books", {"page_size": 2}))
    second = structured(call(client, "search_books", {"page_size": 2, "page": 2}))

    assert [b["title"] for b in first["results"]] == ["Dune", "Dune Messiah"]
    assert (first["count"], first["page"], first["hasMore"]) == (4, 1, True)
    assert [b["title"] for b in second["results"]] == [
        "The Dispossessed",
        "The Left Hand of Darkness",
    ]
    assert second["hasMore"] is False


def test_list_rows_have_every_serializer_field(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Output Schema": a tool with an outputSchema MUST return
    structuredContent that conforms to it."""
    page = structured(call(client, "search_books", {"search": "left hand"}))

    assert page["results"] == [
        {
            "id": catalogue["books"][2].pk,
            "isbn": "9780441478125",
            "title": "The Left Hand of Darkness",
            "author": catalogue["le_guin"].pk,
            "price": "7.25",
            "published": "1965-08-01",
        }
    ]
    Draft202012Validator(output_schema(client, "search_books")).validate(page)


def test_a_page_past_the_end_is_empty(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Tool Result": an empty page is a result, not an error."""
    page = structured(call(client, "search_books", {"page": 9}))

    assert page == {"results": [], "count": 4, "page": 9, "hasMore": False}


def test_search_looks_in_every_search_field(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Calling Tools": search matches any search_fields, across
    relations too (author__name), case-insensitively."""
    by_title = structured(call(client, "search_books", {"search": "DUNE"}))
    by_author = structured(call(client, "search_books", {"search": "le guin"}))

    assert [b["title"] for b in by_title["results"]] == ["Dune", "Dune Messiah"]
    assert [b["title"] for b in by_author["results"]] == [
        "The Dispossessed",
        "The Left Hand of Darkness",
    ]


def test_only_declared_fields_filter(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Error Handling": list_filter fields filter; any other argument
    is an input error the model can correct (isError), not a protocol error."""
    herbert = catalogue["herbert"].pk
    page = structured(call(client, "search_books", {"author": herbert}))

    assert {b["author"] for b in page["results"]} == {herbert}
    assert "title" in tool_error(call(client, "search_books", {"title": "Dune"}))
    assert "author" in tool_error(call(client, "search_books", {"author": "herbert"}))


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"page": 0}, "page"),
        ({"page": "2"}, "page"),
        ({"page_size": 101}, "page_size"),
        ({"page_size": True}, "page_size"),
        ({"search": 3}, "search"),
    ],
)
def test_bad_paging_is_a_tool_error_naming_the_argument(
    client: Client, catalogue: Any, arguments: dict[str, Any], named: str
) -> None:
    """server/tools.mdx, "Error Handling": input validation errors are tool execution
    errors, reported with isError so the model can correct itself."""
    assert named in tool_error(call(client, "search_books", arguments))


def test_get_queryset_scopes_the_rows(client: Client, catalogue: Any, boss: Any) -> None:
    """server/tools.mdx, "Security Considerations": servers MUST enforce access control;
    get_queryset(ctx) keeps unpublished books from non-staff callers in list and get."""
    draft = {"isbn": "9999999999999"}
    anonymous_count = structured(call(client, "search_books", {}))["count"]
    anonymous_get = call(client, "book_get", draft)
    client.force_login(boss)

    assert anonymous_count == 4
    assert "No book" in tool_error(anonymous_get)
    assert structured(call(client, "search_books", {}))["count"] == 5
    assert structured(call(client, "book_get", draft))["title"] == "Unfinished Draft"


def test_writes_reach_only_rows_of_get_queryset(
    client: Client, catalogue: Any, editor: Any
) -> None:
    """server/tools.mdx, "Security Considerations": access control applies to writes too;
    a row outside get_queryset(ctx) cannot be updated or deleted, and answers like a
    missing one."""
    client.force_login(editor)  # may change and delete books, but is not staff
    draft = "9999999999999"

    assert "No book" in tool_error(call(client, "book_update", {"isbn": draft, "title": "X"}))
    assert "No book" in tool_error(call(client, "book_delete", {"isbn": draft}))
    assert Book.objects.get(isbn=draft).title == "Unfinished Draft"


# -- get -----------------------------------------------------------------------------------


def test_get_finds_a_row_by_its_lookup_field(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Output Schema": get returns the row as structuredContent that
    conforms to the outputSchema."""
    book = structured(call(client, "book_get", {"isbn": "9780441013593"}))

    assert book["title"] == "Dune"
    Draft202012Validator(output_schema(client, "book_get")).validate(book)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [({"isbn": "0000000000000"}, "No book"), ({}, "isbn"), ({"isbn": "1", "x": 1}, "x")],
)
def test_get_errors_are_tool_errors(
    client: Client, catalogue: Any, arguments: dict[str, Any], named: str
) -> None:
    """server/tools.mdx, "Error Handling": a missing row or bad arguments are tool
    execution errors, not protocol errors."""
    assert named in tool_error(call(client, "book_get", arguments))


def test_a_bad_primary_key_is_a_tool_error(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Error Handling": a lookup value of the wrong type is an input
    validation error (isError)."""
    assert "id" in tool_error(call(client, "author_get", {"id": "abc"}, at="/mcp"))


# -- create --------------------------------------------------------------------------------

NEW_BOOK = {"isbn": "9780765326355", "title": "The Way of Kings", "price": "12.50"}


def test_create_saves_a_row_and_returns_it(client: Client, catalogue: Any, editor: Any) -> None:
    """server/tools.mdx, "Output Schema": create returns the saved row, conforming to its
    outputSchema."""
    client.force_login(editor)
    book = structured(call(client, "book_create", {**NEW_BOOK, "author": catalogue["herbert"].pk}))

    saved = Book.objects.get(isbn=NEW_BOOK["isbn"])
    assert book["id"] == saved.pk
    assert (saved.title, saved.price, saved.author) == (
        "The Way of Kings",
        Decimal("12.50"),
        catalogue["herbert"],
    )
    Draft202012Validator(output_schema(client, "book_create")).validate(book)


def test_serializer_errors_name_each_field(client: Client, catalogue: Any, editor: Any) -> None:
    """server/tools.mdx, "Error Handling": invalid input is a tool execution error; the
    serializer's messages name every field in error, its own validate_isbn included."""
    client.force_login(editor)
    message = tool_error(
        call(client, "book_create", {"isbn": "12", "author": 999_999, "price": "x"})
    )

    assert message.startswith("Invalid book: ")
    for field in ("isbn: An ISBN has 13 digits.", "title:", "author:", "price:"):
        assert field in message
    assert Book.objects.count() == 5


def test_a_duplicate_unique_value_is_a_tool_error(
    client: Client, catalogue: Any, editor: Any
) -> None:
    """server/tools.mdx, "Error Handling": business-rule failures (a taken ISBN) are tool
    execution errors naming the field."""
    client.force_login(editor)
    taken = {**NEW_BOOK, "isbn": "9780441013593", "author": catalogue["herbert"].pk}

    assert "isbn:" in tool_error(call(client, "book_create", taken))


def test_create_refuses_arguments_outside_its_schema(
    client: Client, catalogue: Any, editor: Any
) -> None:
    """server/tools.mdx, "Error Handling": arguments that break the
    inputSchema (additionalProperties: false; ``id`` is read-only) are input validation
    errors, not silently ignored."""
    client.force_login(editor)
    arguments = {**NEW_BOOK, "author": catalogue["herbert"].pk, "id": 1, "colour": "red"}
    message = tool_error(call(client, "book_create", arguments))

    assert "colour" in message
    assert "id" in message
    assert not Book.objects.filter(isbn=NEW_BOOK["isbn"]).exists()


def test_a_write_that_fails_after_saving_is_rolled_back(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Error Handling": a failed create is reported with isError, and
    each write runs in a transaction, so nothing of it remains."""
    before = Author.objects.count()
    message = tool_error(call(client, "author_create", {"name": "fail"}, at="/mcp"))

    assert message == "refused after saving"
    assert Author.objects.count() == before


# -- update --------------------------------------------------------------------------------


def test_update_changes_only_the_given_fields(client: Client, catalogue: Any, editor: Any) -> None:
    """server/tools.mdx, "Calling Tools": update is partial."""
    client.force_login(editor)
    book = structured(call(client, "book_update", {"isbn": "9780441013593", "price": "11.00"}))

    assert (book["price"], book["title"]) == ("11.00", "Dune")
    assert Book.objects.get(isbn="9780441013593").price == Decimal("11.00")


def test_update_errors_change_nothing(client: Client, catalogue: Any, editor: Any) -> None:
    """server/tools.mdx, "Error Handling": invalid changes and unknown rows are tool
    errors; the row keeps its values."""
    client.force_login(editor)
    invalid = call(client, "book_update", {"isbn": "9780441013593", "price": "cheap", "title": ""})
    missing = call(client, "book_update", {"isbn": "0000000000000", "title": "X"})
    unknown = call(client, "book_update", {"isbn": "9780441013593", "colour": "red"})

    assert "price:" in tool_error(invalid)
    assert "title:" in tool_error(invalid)
    assert "No book" in tool_error(missing)
    assert "colour" in tool_error(unknown)
    assert Book.objects.get(isbn="9780441013593").price == Decimal("9.99")


def test_an_update_that_fails_after_saving_is_rolled_back(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Error Handling": each write runs in a transaction."""
    author = catalogue["herbert"]
    message = tool_error(
        call(client, "author_update", {"id": author.pk, "name": "fail"}, at="/mcp")
    )

    assert message == "refused after saving"
    author.refresh_from_db()
    assert author.name == "Frank Herbert"


# -- delete --------------------------------------------------------------------------------


def test_delete_removes_the_row(client: Client, catalogue: Any, editor: Any) -> None:
    """server/tools.mdx, "Output Schema": delete returns what it deleted."""
    client.force_login(editor)
    result = structured(call(client, "book_delete", {"isbn": "9780441013593"}))

    assert result == {"deleted": True, "isbn": "9780441013593"}
    assert not Book.objects.filter(isbn="9780441013593").exists()
    assert "No book" in tool_error(call(client, "book_delete", {"isbn": "9780441013593"}))


def test_a_protected_row_is_not_deleted(client: Client, catalogue: Any) -> None:
    """server/tools.mdx, "Error Handling": a business rule (books still reference this
    author through a PROTECT foreign key) is a tool execution error, not an internal
    error."""
    author = catalogue["herbert"]
    message = tool_error(call(client, "author_delete", {"id": author.pk}, at="/mcp"))

    assert "author" in message
    assert Author.objects.filter(pk=author.pk).exists()
