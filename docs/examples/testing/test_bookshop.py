"""Testing MCP tools with the test client (docs/guides/testing.md)."""

from __future__ import annotations

from typing import Any

import pytest

import django_mcp
from django_mcp import Context, ToolError
from django_mcp.test import MCPClient, MCPClientError


# [docs:tools]
@django_mcp.tool
def price(isbn: str) -> str:
    """The price of one book."""
    if isbn != "9780441172719":
        raise ToolError(f"No book has ISBN {isbn}.")
    return "9.99"


@django_mcp.tool
def reserve(ctx: Context, isbn: str) -> str:
    """Reserve a book after asking for the customer's name."""
    answer = ctx.elicit("Who is the reservation for?", {"name": str}, key="name")
    if not answer.accepted:
        return "Not reserved."
    return f"Reserved {isbn} for {answer.content['name']}."


# [/docs:tools]


# [docs:tests]
def test_price(mcp_client: MCPClient) -> None:
    result = mcp_client.call_tool("price", isbn="9780441172719")
    assert result.text == "9.99"
    assert result.is_error is False


def test_an_unknown_book_is_a_tool_error(mcp_client: MCPClient) -> None:
    result = mcp_client.call_tool("price", isbn="0")
    assert result.is_error is True
    assert result.text == "No book has ISBN 0."


def test_an_unknown_tool_is_a_protocol_error(mcp_client: MCPClient) -> None:
    with pytest.raises(MCPClientError) as caught:
        mcp_client.call_tool("no_such_tool")
    assert caught.value.code == -32602


def test_reserve_answers_the_question(mcp_client: MCPClient) -> None:
    answers = {"name": {"action": "accept", "content": {"name": "Ada"}}}
    result = mcp_client.call_tool("reserve", isbn="9780441172719", answer=answers)
    assert result.text == "Reserved 9780441172719 for Ada."


@pytest.mark.django_db
def test_as_a_signed_in_user(mcp_client: MCPClient, django_user_model: Any) -> None:
    mcp_client.force_authenticate(django_user_model.objects.create(username="ada"))
    assert mcp_client.call_tool("price", isbn="9780441172719").text == "9.99"


# [/docs:tests]
