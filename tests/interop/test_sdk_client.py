"""The official MCP Python SDK (``mcp`` 2.3) against the testproject served by Daphne.

basic/lifecycle.mdx (2026-07-28): "Clients MAY call server/discover to learn the server's
supported versions, capabilities and identity"; a 2026-07-28 server has no initialize
handshake, so a client in ``mode="auto"`` must adopt 2026-07-28 from the discover result
and never fall back to ``initialize``.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pytest
from mcp import Client

from tests.sdk import run_sdk_client

if TYPE_CHECKING:
    from tests.live import LiveServer

pytestmark = pytest.mark.live

CLIENT = types.Implementation(name="django-mcp-interop", version="1.0")
DUNE = {"isbn": "9780441172719", "title": "Dune", "author": "Frank Herbert", "price": "10.99"}


#: Run ``body`` with an auto-mode SDK client on ``url`` (response cache off).
run_client = partial(run_sdk_client, client_info=CLIENT, read_timeout_seconds=30)


def test_auto_mode_client_adopts_2026_07_28_from_server_discover(daphne_server: LiveServer):
    """basic/lifecycle.mdx: the server identifies itself in the discover result's
    ``_meta["io.modelcontextprotocol/serverInfo"]``; the SDK reads ``server_info`` only from
    there, so a set ``server_info`` proves the discover path (not initialize) was taken."""

    async def body(client: Client) -> dict[str, Any]:
        discovered = client.session.discover_result
        return {
            "version": client.protocol_version,
            "discovered": discovered is not None,
            "supported": list(discovered.supported_versions) if discovered else [],
            "server": client.server_info.name if client.server_info else None,
            "tools": client.server_capabilities.tools is not None,
            "instructions": client.instructions,
        }

    seen = run_client(daphne_server.url(), body)

    assert seen["version"] == "2026-07-28"
    assert seen["discovered"] is True
    assert "2026-07-28" in seen["supported"]
    assert seen["server"] == "django-mcp-demo"
    assert seen["tools"] is True
    assert seen["instructions"]


def test_tools_list_shows_the_demo_tools_with_their_schemas(daphne_server: LiveServer):
    """server/tools.mdx, "Listing Tools": each tool has a name and an ``inputSchema``."""

    async def body(client: Client) -> dict[str, types.Tool]:
        result = await client.list_tools()
        return {tool.name: tool for tool in result.tools}

    tools = run_client(daphne_server.url(), body)

    assert {"search_books", "get_book", "whoami"} <= set(tools)
    search = tools["search_books"]
    assert search.input_schema["required"] == ["query"]
    assert search.annotations is not None
    assert search.annotations.read_only_hint is True


def test_search_books_returns_the_seeded_book_as_structured_content(daphne_server: LiveServer):
    """server/tools.mdx, "Structured Content": ``structuredContent`` conforms to the tool's
    ``outputSchema`` (the SDK validates it and raises if it does not)."""

    async def body(client: Client) -> types.CallToolResult:
        await client.list_tools()
        return await client.call_tool("search_books", {"query": "dune"})

    result = run_client(daphne_server.url(), body)

    assert result.is_error is False
    structured = result.structured_content
    books = structured["result"] if isinstance(structured, dict) else structured
    assert [dict(book) for book in books] == [DUNE]


def test_a_tool_error_comes_back_as_a_result_with_is_error(daphne_server: LiveServer):
    """server/tools.mdx, "Error Handling": tool execution errors are reported in the result
    with ``isError: true``, not as protocol errors."""

    result = run_client(
        daphne_server.url(), lambda client: client.call_tool("get_book", {"isbn": "0000000000000"})
    )

    assert result.is_error is True
    assert result.content[0].type == "text"


def test_whoami_sees_the_client_info_and_revision_of_the_request(daphne_server: LiveServer):
    """basic/index.mdx, "_meta": every request carries ``clientInfo`` and
    ``protocolVersion``; the tool's Context reads them from the request itself."""

    result = run_client(daphne_server.url(), lambda client: client.call_tool("whoami", {}))

    assert result.is_error is False
    assert result.content[0].text == "You are django-mcp-interop, speaking MCP 2026-07-28."


def test_the_sdk_reads_a_fixed_resource_and_a_template_resource(daphne_server: LiveServer):
    """server/resources.mdx, "Reading Resources": a fixed URI from ``resources/list`` and a
    concrete URI matching a template from ``resources/templates/list`` are both read with
    ``resources/read``."""

    async def body(client: Client) -> dict[str, Any]:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        about = await client.read_resource("bookshop://about")
        book = await client.read_resource(f"books://{DUNE['isbn']}")
        return {
            "listed": [str(resource.uri) for resource in listed.resources],
            "templates": [template.uri_template for template in templates.resource_templates],
            "about": about.contents[0],
            "book": book.contents[0],
        }

    seen = run_client(daphne_server.url(), body)

    assert "bookshop://about" in seen["listed"]
    assert "books://{isbn}" in seen["templates"]
    assert seen["about"].mime_type == "text/markdown"
    assert "books in the catalogue" in seen["about"].text
    assert seen["book"].mime_type == "application/json"
    assert '"title": "Dune"' in seen["book"].text


def test_the_sdk_gets_a_prompt_and_completes_its_arguments(daphne_server: LiveServer):
    """server/prompts.mdx, "Getting a Prompt", and server/utilities/completion.mdx: prompt
    arguments are strings; completion suggests values for a prompt argument and for a
    resource-template variable."""

    async def body(client: Client) -> dict[str, Any]:
        prompt = await client.get_prompt(
            "review_request", {"isbn": DUNE["isbn"], "tone": "friendly"}
        )
        isbn = await client.complete(
            types.PromptReference(type="ref/prompt", name="review_request"),
            {"name": "isbn", "value": "978044117"},
        )
        tone = await client.complete(
            types.PromptReference(type="ref/prompt", name="review_request"),
            {"name": "tone", "value": "cr"},
        )
        template = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="books://{isbn}"),
            {"name": "isbn", "value": "978044117"},
        )
        return {
            "message": prompt.messages[0],
            "isbn": isbn.completion.values,
            "tone": tone.completion.values,
            "template": template.completion.values,
        }

    seen = run_client(daphne_server.url(), body)

    assert seen["message"].role == "user"
    assert "friendly review of 'Dune'" in seen["message"].content.text
    assert DUNE["isbn"] in seen["isbn"]
    assert seen["tone"] == ["critical"]
    assert DUNE["isbn"] in seen["template"]
