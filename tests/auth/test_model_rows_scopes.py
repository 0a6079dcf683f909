"""A ModelTools' rows, read as resources, ask for the scopes of its ``get`` action, as its
``<model>_get`` tool does (basic/authorization.mdx, "Scope Selection Strategy"; ADR 0005):
a token without them must not read through ``resources/read`` what the tool refuses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import pytest

import django_mcp
from django_mcp.protocol import errors
from testproject.books.models import Book
from tests.auth.conftest import bearer
from tests.helpers import assert_error, call_tool, read_resource, result_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.test import Client

    from django_mcp.sites import MCPSite

pytestmark = pytest.mark.django_db


class Shelf(django_mcp.ModelTools):
    actions = ("get",)
    lookup_field = "isbn"
    resource_uri = "shelf://{isbn}"
    scopes_required: ClassVar = {"get": "books:read"}


@pytest.fixture
def shelf(auth_site: MCPSite) -> MCPSite:
    auth_site.register(Book, Shelf)
    return auth_site


def test_a_token_without_the_get_scope_reads_no_row(
    client: Client, shelf: MCPSite, book: Any, issue: Callable[..., str]
) -> None:
    uri = f"shelf://{book.isbn}"
    lacking = bearer(issue("books:write"))

    refused = read_resource(client, uri, headers=lacking)
    tool = call_tool(client, "book_get", {"isbn": book.isbn}, headers=lacking)

    for response in (refused, tool):
        assert_error(response, 403, errors.INVALID_REQUEST)
        assert 'error="insufficient_scope"' in response["WWW-Authenticate"]
        assert 'scope="books:read"' in response["WWW-Authenticate"]


def test_no_token_is_challenged_for_the_get_scope(
    client: Client, shelf: MCPSite, book: Any
) -> None:
    response = read_resource(client, f"shelf://{book.isbn}")
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert 'scope="books:read"' in response["WWW-Authenticate"]


def test_a_token_with_the_get_scope_reads_the_row(
    client: Client, shelf: MCPSite, book: Any, issue: Callable[..., str]
) -> None:
    response = read_resource(client, f"shelf://{book.isbn}", headers=bearer(issue("books:read")))
    [content] = result_of(response)["contents"]
    assert content["uri"] == f"shelf://{book.isbn}"
    assert '"title": "Dune"' in content["text"]
