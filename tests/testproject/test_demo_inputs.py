"""The demo's declarations check what a client sends before it reaches a query.

A hostile probe found each of these answered -32603 (an internal error for the client's own
input) or worse: a NUL in an ISBN, a search or a completion value (PostgreSQL refuses NUL
in a query); a 50,001-character search (SQLite refuses a LIKE pattern over 50,000 bytes);
and a price of a million, which SQLite stored in a ``max_digits=8`` column and which then
broke every read of the book. server/tools.mdx, "Error Handling": invalid arguments are a
tool execution error (``isError``); server/prompts.mdx and server/resources.mdx: -32602 for
an invalid prompt argument, "Resource not found" for a URI that names nothing.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from testproject.books.models import Author, Book
from tests.helpers import call_tool, mcp_post, result_of

pytestmark = pytest.mark.django_db

DUNE = "9780441172719"


@pytest.fixture
def dune() -> Book:
    author = Author.objects.create(name="Frank Herbert")
    return Book.objects.create(isbn=DUNE, title="Dune", author=author, price=Decimal("10.99"))


def tool_error(response: Any) -> str:
    result = result_of(response)
    assert result.get("isError") is True, result
    return str(result["content"][0]["text"])


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("get_book", {"isbn": "\x00"}, "isbn: String should match pattern"),
        ("get_book", {"isbn": "9" * 5000}, "isbn: String should match pattern"),
        ("search_books", {"query": "a\x00"}, "query: Value error, must not contain NUL"),
        ("search_books", {"query": "x" * 50_001}, "query: String should have at most 200"),
    ],
)
def test_garbage_arguments_are_a_tool_error_not_an_internal_error(
    client, dune, tool, arguments, says
):
    assert says in tool_error(call_tool(client, tool, arguments))


def test_a_price_the_column_cannot_hold_is_refused_and_the_book_stays_readable(
    client, dune, admin_user
):
    """A session is not scope-limited, so the superuser may call ``set_price``."""
    client.force_login(admin_user)
    refused = call_tool(client, "set_price", {"isbn": DUNE, "price": "1000000.00"})

    assert "price: Decimal input should have no more than 6 digits before" in tool_error(refused)
    book = result_of(call_tool(client, "get_book", {"isbn": DUNE}))["structuredContent"]
    assert book["price"] == "10.99"


def test_a_nul_in_an_isbn_is_an_invalid_prompt_argument(client, dune):
    response = mcp_post(
        client, "prompts/get", {"name": "review_request", "arguments": {"isbn": "\x00"}}
    )
    assert response.json()["error"]["code"] == -32602


def test_a_uri_whose_isbn_is_garbage_names_no_resource(client, dune):
    response = mcp_post(client, "resources/read", {"uri": "books://%00"})
    assert response.json()["error"]["message"] == "Resource not found"
    assert "contents" in result_of(mcp_post(client, "resources/read", {"uri": f"books://{DUNE}"}))


def test_a_nul_in_a_completion_value_completes_to_nothing(client, dune):
    """-32603 on PostgreSQL before: the value went straight into the query."""
    params = {
        "ref": {"type": "ref/prompt", "name": "review_request"},
        "argument": {"name": "isbn", "value": "\x00"},
    }
    assert result_of(mcp_post(client, "completion/complete", params))["completion"]["values"] == []
    params["argument"]["value"] = "978"
    assert result_of(mcp_post(client, "completion/complete", params))["completion"]["values"] == [
        DUNE
    ]


@pytest.mark.timeout(20)
def test_the_conformance_fixture_s_slow_tool_is_bounded(client):
    """``slow_compute`` sleeps as long as it is asked: 10**30 seconds held a synchronous
    worker for good. Bounded, the call is refused at once as invalid arguments."""
    message = tool_error(call_tool(client, "slow_compute", {"seconds": 10**30}))
    assert "seconds: Input should be less than or equal to 600" in message
