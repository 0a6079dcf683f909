# books/test_mcp.py
import pytest

from books.models import Author, Book
from django_mcp.test import MCPClient


@pytest.fixture
def dune(db: None) -> Book:
    author = Author.objects.create(name="Frank Herbert")
    return Book.objects.create(isbn="9780441172719", title="Dune", author=author, price="10.99")


def test_search_books_finds_dune(mcp_client: MCPClient, dune: Book) -> None:
    result = mcp_client.call_tool("search_books", query="dune")
    assert result.structured == [
        {"isbn": "9780441172719", "title": "Dune", "author": "Frank Herbert", "price": "10.99"}
    ]


def test_an_unknown_isbn_is_a_tool_error(mcp_client: MCPClient, dune: Book) -> None:
    result = mcp_client.call_tool("get_book", isbn="0")
    assert result.is_error is True
    assert result.text == "No book has ISBN 0. Use search_books to find one."


def test_whoami_names_the_client(mcp_client: MCPClient) -> None:
    assert mcp_client.call_tool("whoami").text.startswith("You are ")
