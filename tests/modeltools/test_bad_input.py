"""Hostile input to ModelTools: answered with the spec's error, never -32603, never a
traceback in the server log, never a forged log line.

The bookshop's ``AuthorTools`` on the default site at ``/mcp`` serves ``authors://{id}``
and ``author_list`` with ``search``; the module is its own URLconf, adding the example site
of docs/examples/modeltools_example.py (books looked up by ``isbn``) at ``/example/mcp``.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from django.urls import include, path

from django_mcp import ModelTools
from django_mcp.sites import MCPSite
from docs.examples import modeltools_example
from testproject.books.models import Author, Book
from tests.helpers import assert_error, call_tool, mcp_post, result_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from django.test import Client

urlpatterns = [
    path("mcp", include("django_mcp.urls")),
    path("example/mcp", modeltools_example.site.urls),
]

pytestmark = pytest.mark.urls(__name__)


@pytest.fixture
def server_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


def problems_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "uri",
    [
        "authors://999999",  # no such row
        "authors://abc",  # not an integer
        "authors://1%0AERROR forged line",  # a newline for the log
        "authors://%00",
        "authors://" + "9" * 5000,  # more digits than int() reads (4300)
        "authors://-" + "9" * 5000,
    ],
)
def test_a_missing_or_malformed_instance_is_resource_not_found(
    client: Client, server_log: pytest.LogCaptureFixture, uri: str
) -> None:
    """server/resources.mdx, "Error Handling": a resource that does not exist is -32602
    with the URI in ``data`` -- not -32603, and nothing for the server log."""
    error = assert_error(mcp_post(client, "resources/read", {"uri": uri}), 200, -32602)

    assert error["data"] == {"uri": uri}
    assert problems_logged(server_log) == []


@pytest.mark.django_db
def test_an_instance_that_exists_is_read(client: Client) -> None:
    author = Author.objects.create(name="Ada")
    result = result_of(mcp_post(client, "resources/read", {"uri": f"authors://{author.pk}"}))

    assert '"Ada"' in result["contents"][0]["text"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "spelling", ["0_{pk}", "0{pk}", "%20{pk}", "{pk}%20", "%2B{pk}", "{pk}.0", "{arabic}"]
)
def test_an_integer_key_is_ascii_digits_only(client: Client, spelling: str) -> None:
    """server/resources.mdx, "Resource Templates" and "Security Considerations": servers
    MUST validate resource URIs. An integer key is spelled as ``str(int)`` spells it; the
    spellings the field's ``to_python`` (``int()``) would also read as the row's key -- a
    leading zero, digit separators, spaces, a plus sign, non-ASCII digits -- are not
    found, so one row is not named by many URIs."""
    author = Author.objects.create(name="Ada")
    arabic = "".join(chr(0x660 + int(digit)) for digit in str(author.pk))
    uri = "authors://" + spelling.format(pk=author.pk, arabic=quote(arabic))

    error = assert_error(mcp_post(client, "resources/read", {"uri": uri}), 200, -32602)

    assert error["data"] == {"uri": uri}


def tool_error(response: Any) -> str:
    result = result_of(response)
    assert result.get("isError") is True, result
    text: str = result["content"][0]["text"]
    return text


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"page": 10**18}, "page: must be between 1 and 10000"),
        ({"page": 0}, "page: must be between 1 and 10000"),
        ({"search": "a\x00b"}, "search: must not contain NUL characters"),
        ({"search": "x" * 201}, "search: must be at most 200 characters"),
        ({"search": "x" * 1_000_000}, "search: must be at most 200 characters"),
    ],
)
def test_list_arguments_are_bounded_before_the_database(
    client: Client, server_log: pytest.LogCaptureFixture, arguments: dict[str, Any], message: str
) -> None:
    """server/tools.mdx, "Error Handling": argument validation failures are tool
    execution errors (``isError: true``) the model can correct -- never a database error
    answered as -32603."""
    assert tool_error(call_tool(client, "author_list", arguments)) == message
    assert problems_logged(server_log) == []


@pytest.mark.django_db
def test_a_nul_in_a_lookup_is_a_tool_error(client: Client) -> None:
    """PostgreSQL refuses NUL in any text; the argument check refuses it first."""
    message = tool_error(call_tool(client, "book_get", {"isbn": "978\x00"}, path="/example/mcp"))

    assert message == "isbn: must not contain NUL characters"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "id: must not be a boolean"),
        (1.5, "id: must be a whole number"),
        ("1", "id: must be an integer, not a string"),
        ("1_0", "id: must be an integer, not a string"),
        (" 1", "id: must be an integer, not a string"),
    ],
)
def test_a_lookup_the_schema_does_not_allow_finds_no_row(
    client: Client, value: Any, message: str
) -> None:
    """server/tools.mdx, "Error Handling": arguments that do not fit the input schema are
    a tool execution error. The lookup's schema says integer; Django's ``to_python``
    would read ``true``, ``1.5``, ``"1"``, ``"1_0"`` and ``" 1"`` as a row's key and return
    a row the model never named (as a ``@tool`` validates strictly, a string is no
    integer)."""
    Author.objects.create(pk=10, name="Ten")  # the row "1_0" would name
    Author.objects.create(pk=1, name="Ursula K. Le Guin")  # the row 1.5 and true would name

    assert tool_error(call_tool(client, "author_get", {"id": value})) == message
    found = result_of(call_tool(client, "author_get", {"id": 1.0}))  # JSON Schema's integer
    assert found["structuredContent"]["name"] == "Ursula K. Le Guin"


@pytest.mark.django_db
def test_search_within_bounds_still_works(client: Client) -> None:
    Author.objects.create(name="Ursula K. Le Guin")
    result = result_of(call_tool(client, "author_list", {"search": "le guin", "page": 1}))

    assert [row["name"] for row in result["structuredContent"]["results"]] == ["Ursula K. Le Guin"]


# -- a key that names several rows ------------------------------------------------------

titles = MCPSite(name="bad-input-titles")
urlpatterns.append(path("titles/mcp", titles.urls))


class TitleBookTools(ModelTools):
    """Books found by title, which two books may share (check W017 warns of it)."""

    fields = ("id", "isbn", "title", "price")
    actions = ("get", "update", "delete")
    lookup_field = "title"
    resource_uri = "titles://{title}"


@pytest.fixture
def by_title() -> Iterator[None]:
    """Registered for the test only, so the project's own check run stays clean."""
    titles.register(Book, TitleBookTools)
    yield
    titles.unregister(Book)


@pytest.mark.django_db
@pytest.mark.usefixtures("by_title")
def test_a_key_naming_several_rows_is_a_tool_error_and_touches_none(
    client: Client, server_log: pytest.LogCaptureFixture
) -> None:
    """server/tools.mdx, "Error Handling": a call the server cannot carry out as asked is
    a tool execution error (``isError: true``) the model can act on, not a protocol error
    and never -32603. Two books are titled "Dune": get, update and delete by that title
    say so and change nothing; server/resources.mdx: the URI names no one resource, so
    ``resources/read`` is -32602 resource not found."""
    author = Author.objects.create(name="Frank Herbert")
    for isbn in ("9780441013593", "9780340960196"):
        Book.objects.create(isbn=isbn, title="Dune", author=author, price="9.99")
    arguments = {"title": "Dune"}

    def call(name: str, **more: Any) -> str:
        return tool_error(call_tool(client, name, {**arguments, **more}, path="/titles/mcp"))

    assert call("book_get") == "2 books have title 'Dune'."
    assert call("book_update", price="1.00") == "2 books have title 'Dune'."
    assert call("book_delete") == "2 books have title 'Dune'."
    assert sorted(Book.objects.values_list("price", flat=True)) == [Decimal("9.99")] * 2
    uri = "titles://Dune"
    read = mcp_post(client, "resources/read", {"uri": uri}, path="/titles/mcp")
    assert assert_error(read, 200, -32602)["data"] == {"uri": uri}
    assert problems_logged(server_log) == []
