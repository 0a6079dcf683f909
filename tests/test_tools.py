"""Tools: declaration, listing and calling through the real HTTP stack (server/tools.mdx).

Every test declares its tools on a fresh ``MCPSite`` served at ``/mcp`` (the ``mcp_site``
fixture); every response is also validated against schema.json by the suite's conftest.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import types
from typing import Annotated, Any

import pytest
from django.apps import apps
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django.urls import path
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from django_mcp import (
    AlreadyRegistered,
    Audio,
    Context,
    EmbeddedResource,
    Image,
    InvalidDeclaration,
    MCPHeader,
    NotRegistered,
    ResourceContents,
    ResourceLink,
    Text,
    ToolError,
    ToolResult,
    sites,
)
from django_mcp.protocol.errors import INTERNAL_ERROR
from django_mcp.server.pagination import encode_cursor
from django_mcp.sites import MCPSite, autodiscover
from django_mcp.sites import site as default_site
from tests import urls as test_urls
from tests.helpers import (
    SERVER_INFO_KEY,
    assert_error,
    call_tool,
    mcp_post,
    override_mcp,
    request_meta,
    result_of,
)

PNG = b"\x89PNG\r\n\x1a\n-not-really"


def tools_list(client: Any, **kw: Any) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = result_of(mcp_post(client, "tools/list", **kw))["tools"]
    return tools


def tool_definition(client: Any, name: str) -> dict[str, Any]:
    return next(tool for tool in tools_list(client) if tool["name"] == name)


def call_result(client: Any, name: str, arguments: dict[str, Any] | None = None) -> Any:
    return result_of(call_tool(client, name, arguments if arguments is not None else {}))


# -- sync, async and Context -----------------------------------------------------------------


def test_a_sync_tool_is_called_with_its_arguments(mcp_client, mcp_site):
    """server/tools.mdx "Calling Tools": tools/call with name and arguments."""

    @mcp_site.tool
    def add(a: int, b: int) -> str:
        return str(a + b)

    result = mcp_client.call_tool("add", a=2, b=40)
    assert result.content == [{"type": "text", "text": "42"}]
    assert result.is_error is False
    assert "isError" not in result.raw or result.raw["isError"] is False


def test_an_async_tool_is_awaited(mcp_client, mcp_site):
    @mcp_site.tool
    async def slow_add(a: int, b: int) -> str:
        await asyncio.sleep(0)
        return str(a + b)

    assert mcp_client.call_tool("slow_add", a=1, b=2).content[0]["text"] == "3"


def test_context_is_injected_and_never_part_of_the_input_schema(client, mcp_site):
    """basic/index.mdx "Statelessness": everything about the request (client info,
    declared version) comes with the request itself; docs/guides/tools.md, "The request's
    Context": a Context parameter is injected, never part of the schema."""
    seen: dict[str, Any] = {}

    @mcp_site.tool
    def who(ctx: Context, greeting: str = "hi") -> str:
        seen.update(
            client=ctx.client_info,
            revision=ctx.declared_revision,
            request=ctx.request,
            user=ctx.user,
            method=ctx.method,
            capabilities=dict(ctx.client_capabilities),
        )
        return greeting

    @mcp_site.tool
    def optional_ctx(ctx: Context | None = None) -> str:
        return "yes" if isinstance(ctx, Context) else "no"

    schema = tool_definition(client, "who")["inputSchema"]
    assert set(schema["properties"]) == {"greeting"}
    assert "ctx" not in json.dumps(schema)
    assert tool_definition(client, "optional_ctx")["inputSchema"] == {
        "type": "object",
        "additionalProperties": False,
    }

    call_result(client, "who")
    assert seen["client"].name == "pytest"
    assert seen["client"].version == "1.0"
    assert seen["revision"] == "2026-07-28"
    assert isinstance(seen["request"], HttpRequest)
    assert seen["request"].path == "/mcp"
    assert isinstance(seen["user"], AnonymousUser)
    assert seen["method"] == "tools/call"
    assert seen["capabilities"] == {}
    assert call_result(client, "optional_ctx")["content"][0]["text"] == "yes"


def test_context_carries_what_this_request_declared_and_nothing_earlier(client, mcp_site):
    """basic/index.mdx "Statelessness": "Servers MUST NOT rely on prior requests over the
    same connection to establish context (e.g., capabilities, protocol version, client
    identity)."""
    seen: list[tuple[str, str | None, dict[str, Any]]] = []

    @mcp_site.tool
    def who(ctx: Context) -> str:
        name = ctx.client_info.name if ctx.client_info else None
        seen.append((ctx.declared_revision, name, dict(ctx.client_capabilities)))
        return "ok"

    first = request_meta(
        version="2099-01-01",
        capabilities={"elicitation": {}},
        client_info={"name": "first", "version": "9"},
    )
    call_tool(client, "who", {}, meta=first)
    second = request_meta()
    del second["io.modelcontextprotocol/clientInfo"]
    call_tool(client, "who", {}, meta=second)
    assert seen == [("2099-01-01", "first", {"elicitation": {}}), ("2026-07-28", None, {})]


@pytest.mark.django_db
def test_context_user_is_the_authenticated_django_user(mcp_client, mcp_site, django_user_model):
    """basic/index.mdx "Statelessness": authentication happens on every request; the tool
    sees the Django user of this request."""
    user = django_user_model.objects.create(username="ada")
    mcp_client.force_authenticate(user)

    @mcp_site.tool
    def whoami(ctx: Context) -> str:
        return ctx.user.get_username() if ctx.user and ctx.user.is_authenticated else "anon"

    assert mcp_client.call_tool("whoami").content[0]["text"] == "ada"


def test_a_client_cannot_pass_the_context_parameter_as_an_argument(client, mcp_site):
    """The injected Context is the server's; an argument with its name is an unknown
    argument (additionalProperties: false), reported as a tool execution error."""

    @mcp_site.tool
    def who(ctx: Context) -> str:
        return type(ctx).__name__

    result = call_result(client, "who", {"ctx": {"user": "admin"}})
    assert result["isError"] is True
    assert "ctx" in result["content"][0]["text"]


def test_async_tools_report_tool_errors_and_failures_like_sync_ones(client, mcp_site):
    """server/tools.mdx "Error Handling": the same two kinds of errors for any tool."""

    @mcp_site.tool
    async def refuse() -> str:
        raise ToolError("not today")

    @mcp_site.tool
    async def explode() -> str:
        raise RuntimeError("boom")

    result = call_result(client, "refuse")
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "not today"}]
    assert_error(call_tool(client, "explode", {}), 200, -32603)


# -- input schemas ---------------------------------------------------------------------------


def test_the_input_schema_comes_from_type_hints_field_constraints_and_descriptions(
    client, mcp_site
):
    """server/tools.mdx "Tool": inputSchema is a JSON Schema object (type object at the
    root, any 2020-12 keyword allowed)."""

    @mcp_site.tool
    def search(
        query: Annotated[str, Field(description="Text to look for.", min_length=1)],
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many.")] = 10,
        exact: bool = False,
    ) -> str:
        """Find things."""
        return query

    tool = tool_definition(client, "search")
    assert tool["description"] == "Find things."
    schema = tool["inputSchema"]
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["query"]
    assert schema["properties"]["query"] == {
        "type": "string",
        "description": "Text to look for.",
        "minLength": 1,
    }
    assert schema["properties"]["limit"] == {
        "type": "integer",
        "description": "At most this many.",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }
    assert schema["properties"]["exact"] == {"type": "boolean", "default": False}


def test_a_tool_without_arguments_has_the_recommended_empty_object_schema(client, mcp_site):
    """server/tools.mdx: a tool with no parameters should use
    ``{"type": "object", "additionalProperties": false}``."""

    @mcp_site.tool
    def ping_me() -> str:
        return "pong"

    assert tool_definition(client, "ping_me")["inputSchema"] == {
        "type": "object",
        "additionalProperties": False,
    }


def test_x_mcp_header_parameters_are_marked_in_the_schema(client, mcp_site):
    """basic/transports/streamable-http.mdx "Custom Headers from Tool Parameters": the
    parameter's schema carries ``"x-mcp-header": "<Name>"``."""

    @mcp_site.tool
    def run(region: Annotated[str, MCPHeader("Region")], query: str) -> str:
        return query

    properties = tool_definition(client, "run")["inputSchema"]["properties"]
    assert properties["region"]["x-mcp-header"] == "Region"
    assert "x-mcp-header" not in properties["query"]


def test_tool_options_become_the_definition(client, mcp_site):
    """server/tools.mdx "Tool": title, description, annotations (hints), icons, _meta."""

    @mcp_site.tool(
        name="books.delete",
        title="Delete a book",
        description="Deletes it.",
        read_only=False,
        destructive=True,
        idempotent=True,
        open_world=False,
        icons=[{"src": "https://example.com/i.png", "mimeType": "image/png"}],
        meta={"com.example/owner": "shop"},
    )
    def delete_book(isbn: str) -> str:
        """Ignored: the description option wins."""
        return isbn

    tool = tool_definition(client, "books.delete")
    assert tool["title"] == "Delete a book"
    assert tool["description"] == "Deletes it."
    assert tool["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert tool["icons"] == [{"src": "https://example.com/i.png", "mimeType": "image/png"}]
    assert tool["_meta"] == {"com.example/owner": "shop"}


# -- validation and errors ---------------------------------------------------------------------


@pytest.fixture
def search_tool(mcp_site):
    @mcp_site.tool
    def search(query: str, limit: Annotated[int, Field(ge=1, le=50)] = 10) -> str:
        return f"{query}:{limit}"

    return search


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"query": "x", "limit": 99}, "limit"),
        ({"query": "x", "limit": "5"}, "limit"),
        ({"query": "x", "limit": 5.5}, "limit"),
        ({"limit": 5}, "query"),
        ({"query": 5}, "query"),
        ({"query": "x", "surprise": 1}, "surprise"),
    ],
)
def test_invalid_arguments_are_an_is_error_result_naming_the_field(
    client, search_tool, arguments, field
):
    """server/tools.mdx "Error Handling": input validation errors are tool execution errors
    (``isError: true``) so the model can correct itself."""
    result = call_result(client, "search", arguments)
    assert result["isError"] is True
    assert field in result["content"][0]["text"]


def test_valid_arguments_use_defaults(client, search_tool):
    assert call_result(client, "search", {"query": "x"})["content"][0]["text"] == "x:10"


def test_a_tool_error_is_an_is_error_result(mcp_client, mcp_site):
    """server/tools.mdx "Error Handling": business-logic failures are reported in the result
    with ``isError: true``."""

    @mcp_site.tool
    def refuse() -> str:
        raise ToolError("No book has that ISBN.")

    result = mcp_client.call_tool("refuse")
    assert result.raw["isError"] is True
    assert result.is_error is True
    assert result.content == [{"type": "text", "text": "No book has that ISBN."}]


@pytest.fixture
def exploding_tool(mcp_site):
    @mcp_site.tool
    def explode() -> str:
        raise RuntimeError("secret database password in this message")

    return explode


def test_an_unexpected_exception_is_a_masked_internal_error(client, exploding_tool):
    """server/tools.mdx "Error Handling": server faults are -32603; docs/errors.md: masked
    unless DEBUG."""
    response = call_tool(client, "explode", {})
    error = assert_error(response, 200, -32603)
    assert "data" not in error
    assert b"secret" not in response.content


def test_an_unexpected_exception_carries_details_in_debug(client, exploding_tool, settings):
    settings.DEBUG = True
    error = assert_error(call_tool(client, "explode", {}), 200, -32603)
    assert "RuntimeError" in json.dumps(error["data"])


# -- what a tool returns ------------------------------------------------------------------------


class Book(BaseModel):
    isbn: str
    title: str
    pages: int


def test_return_kinds_become_content_blocks(client, mcp_site):
    """server/tools.mdx "Tool Result": text, image, audio, resource links and embedded
    resources (schema.json ContentBlock)."""

    @mcp_site.tool
    def text() -> str:
        return "plain"

    @mcp_site.tool
    def image() -> Image:
        return Image(PNG, mime_type="image/png")

    @mcp_site.tool
    def audio() -> Audio:
        return Audio(b"RIFF", mime_type="audio/wav")

    @mcp_site.tool
    def link() -> ResourceLink:
        return ResourceLink("books://1", "book-1", title="Book 1", mime_type="application/json")

    @mcp_site.tool
    def embedded() -> EmbeddedResource:
        return EmbeddedResource(ResourceContents("books://1", text="{}", mime_type="text/json"))

    @mcp_site.tool
    def blob() -> EmbeddedResource:
        return EmbeddedResource(ResourceContents("books://1.png", blob=PNG))

    @mcp_site.tool
    def mixed() -> list[Text | Image | str]:
        return ["one", Text("two"), Image(PNG)]

    @mcp_site.tool
    def nothing() -> None:
        return None

    b64 = base64.b64encode(PNG).decode()
    assert call_result(client, "text")["content"] == [{"type": "text", "text": "plain"}]
    assert call_result(client, "image")["content"] == [
        {"type": "image", "data": b64, "mimeType": "image/png"}
    ]
    assert call_result(client, "audio")["content"] == [
        {"type": "audio", "data": base64.b64encode(b"RIFF").decode(), "mimeType": "audio/wav"}
    ]
    assert call_result(client, "link")["content"] == [
        {
            "type": "resource_link",
            "uri": "books://1",
            "name": "book-1",
            "title": "Book 1",
            "mimeType": "application/json",
        }
    ]
    assert call_result(client, "embedded")["content"] == [
        {
            "type": "resource",
            "resource": {"uri": "books://1", "mimeType": "text/json", "text": "{}"},
        }
    ]
    assert call_result(client, "blob")["content"][0]["resource"] == {
        "uri": "books://1.png",
        "blob": b64,
    }
    assert [block["type"] for block in call_result(client, "mixed")["content"]] == [
        "text",
        "text",
        "image",
    ]
    assert call_result(client, "nothing")["content"] == []
    for name in ("text", "image", "audio", "link", "embedded", "blob", "mixed", "nothing"):
        assert "outputSchema" not in tool_definition(client, name)
        assert "structuredContent" not in call_result(client, name)


def test_a_pydantic_model_is_structured_content_with_an_output_schema(client, mcp_site):
    """server/tools.mdx "Structured Content" and "Output Schema": if an outputSchema is
    provided, servers MUST provide structured results that conform to it; a tool returning
    structured content SHOULD also return it serialised as JSON in a text block."""

    @mcp_site.tool
    def get_book(isbn: str) -> Book:
        return Book(isbn=isbn, title="Dune", pages=412)

    tool = tool_definition(client, "get_book")
    output_schema = tool["outputSchema"]
    Draft202012Validator.check_schema(output_schema)
    assert output_schema["type"] == "object"
    result = call_result(client, "get_book", {"isbn": "42"})
    assert result["structuredContent"] == {"isbn": "42", "title": "Dune", "pages": 412}
    Draft202012Validator(output_schema).validate(result["structuredContent"])
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_a_list_return_is_array_structured_content(client, mcp_site):
    """server/tools.mdx: structuredContent may be any JSON value and outputSchema any JSON
    Schema (its root may be an array)."""

    @mcp_site.tool
    def primes() -> list[int]:
        return [2, 3, 5]

    @mcp_site.tool
    def books() -> list[Book]:
        return [Book(isbn="1", title="A", pages=1)]

    output_schema = tool_definition(client, "primes")["outputSchema"]
    assert output_schema == {"type": "array", "items": {"type": "integer"}}
    result = call_result(client, "primes")
    assert result["structuredContent"] == [2, 3, 5]
    assert json.loads(result["content"][0]["text"]) == [2, 3, 5]
    book_schema = tool_definition(client, "books")["outputSchema"]
    Draft202012Validator(book_schema).validate(call_result(client, "books")["structuredContent"])


def test_a_structured_value_that_breaks_the_output_schema_is_not_sent(client, mcp_site):
    """server/tools.mdx "Output Schema": servers MUST provide structured results that conform
    to the schema; a value that does not conform is a server fault, not a result."""

    @mcp_site.tool
    def wrong() -> list[int]:
        return ["not", "ints"]  # type: ignore[list-item]

    assert_error(call_tool(client, "wrong", {}), 200, -32603)


def test_a_non_finite_float_never_breaks_the_output_schema(client, mcp_site):
    """server/tools.mdx "Output Schema": "Servers MUST provide structured results that
    conform to this schema"; JSON cannot carry NaN, so such a result must not be sent as
    one (an error result or -32603 instead)."""

    @mcp_site.tool
    def ratio() -> float:
        return float("nan")

    output_schema = tool_definition(client, "ratio")["outputSchema"]
    message = call_tool(client, "ratio", {}).json()
    if "result" in message and "structuredContent" in message["result"]:
        Draft202012Validator(output_schema).validate(message["result"]["structuredContent"])
    assert message["error"]["code"] == INTERNAL_ERROR


def test_tool_result_gives_full_control(client, mcp_site):
    """schema.json CallToolResult: content, structuredContent, isError and _meta."""

    @mcp_site.tool
    def custom() -> ToolResult:
        return ToolResult(
            content=["partial", Text("more")],
            structured={"done": False},
            is_error=True,
            meta={"com.example/trace": "t1"},
        )

    result = call_result(client, "custom")
    assert result["content"] == [
        {"type": "text", "text": "partial"},
        {"type": "text", "text": "more"},
    ]
    assert result["structuredContent"] == {"done": False}
    assert result["isError"] is True
    assert result["_meta"]["com.example/trace"] == "t1"
    assert result["_meta"][SERVER_INFO_KEY]["name"]
    # server/tools.mdx "Output Schema": a schema binds structuredContent; a ToolResult's is
    # whatever it carries, so it advertises none (not the ToolResult class's fields).
    assert "outputSchema" not in tool_definition(client, "custom")


def test_a_tool_result_beside_a_model_leaves_the_models_schema(client, mcp_site):
    """server/tools.mdx "Output Schema": ``-> Point | ToolResult`` advertises Point's
    schema; a ToolResult returned (an error, say) is sent as it is."""

    class Point(BaseModel):
        x: int

    def place(fail: bool) -> Any:
        if fail:
            return ToolResult(content=["no room"], is_error=True)
        return Point(x=1)

    place.__annotations__["return"] = Point | ToolResult
    mcp_site.tool(place)

    schema = tool_definition(client, "place")["outputSchema"]
    assert schema["properties"] == {"x": {"type": "integer"}}
    assert "$defs" not in schema
    assert call_result(client, "place", {"fail": False})["structuredContent"] == {"x": 1}
    failed = call_result(client, "place", {"fail": True})
    assert failed["isError"] is True


# -- tools/list --------------------------------------------------------------------------------


def _register(site: Any, names: list[str]) -> None:
    for name in names:
        site.tool(name=name)(lambda: "x")


def test_tools_list_is_in_a_deterministic_order(client, mcp_site):
    """server/tools.mdx: tools/list SHOULD use a deterministic order."""
    _register(mcp_site, ["delta", "alpha", "charlie", "bravo"])
    names = [tool["name"] for tool in tools_list(client)]
    assert names == ["alpha", "bravo", "charlie", "delta"]
    assert [tool["name"] for tool in tools_list(client)] == names


def test_tools_list_paginates_with_opaque_cursors(client, mcp_site):
    """server/utilities/pagination.mdx: the server chooses the page size; nextCursor leads to
    the next page; its absence ends the listing."""
    _register(mcp_site, ["e", "d", "c", "b", "a"])
    pages: list[list[str]] = []
    cursor = None
    with override_mcp(PAGE_SIZE=2):
        while True:
            params = {} if cursor is None else {"cursor": cursor}
            result = result_of(mcp_post(client, "tools/list", params))
            pages.append([tool["name"] for tool in result["tools"]])
            cursor = result.get("nextCursor")
            if cursor is None:
                break
            assert isinstance(cursor, str)
    assert pages == [["a", "b"], ["c", "d"], ["e"]]


@pytest.mark.parametrize("change", ["unregister", "register"])
def test_a_cursor_resumes_after_its_last_tool_when_the_list_changes(client, mcp_site, change):
    """server/utilities/pagination.mdx: cursors SHOULD be stable. A cursor counted the tools
    already sent, so a tool removed from the first page (a deploy, a permission granted or
    withdrawn) made the next page start one too far and a tool was never listed, and one
    added made a tool listed twice. The next page starts after the last tool sent."""
    _register(mcp_site, ["b", "c", "d", "e"])
    with override_mcp(PAGE_SIZE=2):
        first = result_of(mcp_post(client, "tools/list"))
        assert [tool["name"] for tool in first["tools"]] == ["b", "c"]
        if change == "unregister":
            mcp_site.unregister("b")
        else:
            _register(mcp_site, ["a"])
        second = result_of(mcp_post(client, "tools/list", {"cursor": first["nextCursor"]}))
    assert [tool["name"] for tool in second["tools"]] == ["d", "e"]
    assert "nextCursor" not in second


class NewestFirstSite(MCPSite):
    """A project's site that lists its tools in an order of its own."""

    def get_tools(self, context: Any = None) -> list[Any]:
        return list(reversed(super().get_tools(context)))


def test_a_site_that_lists_in_its_own_order_still_pages_every_tool_once(client, settings):
    """server/utilities/pagination.mdx: cursors SHOULD be stable. A cursor names the last
    tool sent and the next page starts after it in name order; a site subclass returning
    its tools in another order made that search land anywhere (here: after "d", the page
    "e, d" was followed by nothing, and "a" to "c" were never listed). Pages follow the
    names' order whatever order the site returns."""
    site = NewestFirstSite(name="newest-first")
    _register(site, ["a", "b", "c", "d", "e"])
    test_urls.urlpatterns[:] = [path("mcp", site.urls)]
    settings.ROOT_URLCONF = "tests.urls"
    listed: list[str] = []
    cursor = None
    try:
        with override_mcp(PAGE_SIZE=2):
            for _ in range(5):
                params = {} if cursor is None else {"cursor": cursor}
                result = result_of(mcp_post(client, "tools/list", params))
                listed += [tool["name"] for tool in result["tools"]]
                cursor = result.get("nextCursor")
                if cursor is None:
                    break
    finally:
        test_urls.urlpatterns.clear()
        sites._all_sites.discard(site)
    assert listed == ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize("tamper", ["prefix", "suffix", "flip"])
def test_a_tampered_cursor_is_invalid_params(client, mcp_site, tamper):
    """server/utilities/pagination.mdx: invalid cursors SHOULD result in -32602."""
    _register(mcp_site, ["a", "b", "c"])
    with override_mcp(PAGE_SIZE=1):
        cursor = result_of(mcp_post(client, "tools/list"))["nextCursor"]
        forged = {
            "prefix": "x" + cursor,
            "suffix": cursor + "x",
            "flip": cursor[:-1] + ("A" if cursor[-1] != "A" else "B"),
        }[tamper]
        assert_error(mcp_post(client, "tools/list", {"cursor": forged}), 200, -32602)


def test_a_null_cursor_is_invalid_params(client, mcp_site):
    """schema.json PaginatedRequestParams: ``cursor`` is a string, and
    server/utilities/pagination.mdx: invalid cursors SHOULD result in -32602. A null was
    taken as "no cursor" and answered the first page again: a client whose cursor
    variable went null looped over page one for ever."""
    _register(mcp_site, ["a", "b", "c"])
    with override_mcp(PAGE_SIZE=1):
        assert_error(mcp_post(client, "tools/list", {"cursor": None}), 200, -32602)


def test_a_cursor_for_another_method_or_site_is_refused(client, mcp_site):
    """server/utilities/pagination.mdx: a cursor is only meaningful for the listing that
    issued it."""
    _register(mcp_site, ["a", "b", "c"])
    with override_mcp(PAGE_SIZE=1):
        other_method = encode_cursor(mcp_site.name, "prompts/list", "a")
        assert_error(mcp_post(client, "tools/list", {"cursor": other_method}), 200, -32602)
        other_site = encode_cursor("some-other-site", "tools/list", "a")
        assert_error(mcp_post(client, "tools/list", {"cursor": other_site}), 200, -32602)
        own = encode_cursor(mcp_site.name, "tools/list", "a")
        assert [
            t["name"] for t in result_of(mcp_post(client, "tools/list", {"cursor": own}))["tools"]
        ] == ["b"]


# -- result envelope -----------------------------------------------------------------------------


def test_every_result_has_result_type_and_server_info(client, mcp_site):
    """basic/index.mdx: "The result MUST include a resultType field"; basic/index.mdx "_meta":
    servers SHOULD put io.modelcontextprotocol/serverInfo into every result's _meta."""

    @mcp_site.tool
    def hello() -> str:
        return "hi"

    @mcp_site.tool
    def fails() -> str:
        raise ToolError("no")

    results = [
        result_of(mcp_post(client, "server/discover")),
        result_of(mcp_post(client, "tools/list")),
        call_result(client, "hello"),
        call_result(client, "fails"),
    ]
    for result in results:
        assert result["resultType"] == "complete"
        info = result["_meta"][SERVER_INFO_KEY]
        assert info["name"] == "django-mcp-demo"
        assert isinstance(info["version"], str)


def test_server_info_can_be_switched_off(client, mcp_site):
    with override_mcp(INCLUDE_SERVER_INFO=False):
        result = result_of(mcp_post(client, "server/discover"))
    assert SERVER_INFO_KEY not in result.get("_meta", {})


def test_list_and_discover_results_carry_integer_cache_hints(client, mcp_site):
    """server/utilities/caching.mdx: ttlMs (integer >= 0) and cacheScope ("public" or
    "private") MUST be present on discover and list results."""

    @mcp_site.tool
    def hello() -> str:
        return "hi"

    with override_mcp(DISCOVER_TTL_MS=1234, LIST_TTL_MS=0):
        discover = result_of(mcp_post(client, "server/discover"))
        listing = result_of(mcp_post(client, "tools/list"))
    assert (discover["ttlMs"], type(discover["ttlMs"])) == (1234, int)
    assert (listing["ttlMs"], type(listing["ttlMs"])) == (0, int)
    assert discover["cacheScope"] in ("public", "private")
    assert listing["cacheScope"] in ("public", "private")


def test_discover_capabilities_follow_what_is_registered(client, mcp_site):
    """server/discover.mdx: capabilities describe the server; schema.json
    MethodNotFoundError: a method gated behind an unadvertised capability is -32601 (404)."""
    discover = result_of(mcp_post(client, "server/discover"))
    assert "tools" not in discover["capabilities"]
    assert discover["supportedVersions"] == ["2026-07-28"]
    assert_error(mcp_post(client, "tools/list"), 404, -32601)
    assert_error(call_tool(client, "anything", {}), 404, -32601)

    @mcp_site.tool
    def hello() -> str:
        return "hi"

    assert "tools" in result_of(mcp_post(client, "server/discover"))["capabilities"]
    assert [t["name"] for t in tools_list(client)] == ["hello"]

    mcp_site.unregister("hello")
    assert "tools" not in result_of(mcp_post(client, "server/discover"))["capabilities"]
    assert_error(mcp_post(client, "tools/list"), 404, -32601)


# -- registration ------------------------------------------------------------------------------


def test_registering_a_second_tool_with_the_same_name_names_both_registrants(mcp_site):
    @mcp_site.tool(name="dup")
    def first() -> str:
        return "1"

    def second() -> str:
        return "2"

    with pytest.raises(AlreadyRegistered) as info:
        mcp_site.tool(name="dup")(second)
    message = str(info.value)
    assert "first" in message
    assert "second" in message
    assert mcp_site.get_tool("dup").func is first


@pytest.mark.parametrize("name", ["", "has space", "comma,name", "x" * 129, "naïve", "a/b"])
def test_invalid_tool_names_are_refused(mcp_site, name):
    """server/tools.mdx "Tool names": 1-128 characters of A-Z a-z 0-9 _ - ."""
    with pytest.raises(InvalidDeclaration):
        mcp_site.tool(name=name)(lambda: "x")
    assert not mcp_site.is_registered(name)


@pytest.mark.parametrize("name", ["a", "x" * 128, "getUser", "DATA_EXPORT_v2", "admin.tools.list"])
def test_valid_tool_names_are_accepted(mcp_site, name):
    mcp_site.tool(name=name)(lambda: "x")
    assert mcp_site.is_registered(name)


def test_an_x_mcp_header_on_a_number_parameter_is_refused(mcp_site):
    """streamable-http.mdx "Schema Extension": x-mcp-header applies only to integer, string
    or boolean parameters; "Parameters with type number are not permitted"."""

    def price(amount: Annotated[float, MCPHeader("Amount")]) -> str:
        return str(amount)

    def tags(values: Annotated[list[str], MCPHeader("Tags")]) -> str:
        return ",".join(values)

    for func in (price, tags):
        with pytest.raises(InvalidDeclaration):
            mcp_site.tool(func)
        assert not mcp_site.is_registered(func)


@pytest.mark.parametrize("header", ["", "Bad Header", "a:b", "Région", "a\r\nb", "(x)"])
def test_an_x_mcp_header_that_is_not_a_token_is_refused(mcp_site, header):
    """streamable-http.mdx "Schema Extension": MUST NOT be empty, MUST match 1*tchar, MUST
    NOT contain control characters."""

    def tool(value: Annotated[str, MCPHeader(header)]) -> str:
        return value

    with pytest.raises(InvalidDeclaration):
        mcp_site.tool(tool)


def test_x_mcp_header_names_must_be_unique_case_insensitively(mcp_site):
    """streamable-http.mdx "Schema Extension": MUST be case-insensitively unique."""

    def tool(a: Annotated[str, MCPHeader("Region")], b: Annotated[str, MCPHeader("region")]) -> str:
        return a + b

    with pytest.raises(InvalidDeclaration):
        mcp_site.tool(tool)


@pytest.mark.parametrize("name", ["model_config", "model_dump", "model_validate"])
def test_an_argument_named_as_pydantic_keeps_for_itself_is_refused(mcp_site, name):
    """The arguments become a pydantic model's fields: ``model_config`` was silently
    dropped from the schema (the tool could never be called), and a name in pydantic's
    protected namespace failed with pydantic's own ValueError. Both are refused at
    registration, naming the function and the argument."""
    namespace: dict[str, Any] = {}
    exec(f"def tool({name}: str) -> str:\n    return {name}", namespace)

    with pytest.raises(InvalidDeclaration, match=name) as refused:
        mcp_site.tool(namespace["tool"])
    assert str(refused.value).startswith("tool: ")
    assert "ename" in str(refused.value)  # "rename it" / "Rename the argument"


def test_unregister_by_name_or_function_and_is_registered(mcp_site):
    @mcp_site.tool
    def one() -> str:
        return "1"

    @mcp_site.tool(name="two")
    def second() -> str:
        return "2"

    assert mcp_site.is_registered("one")
    assert mcp_site.is_registered(one)
    assert mcp_site.is_registered(second)
    mcp_site.unregister("one")
    mcp_site.unregister(second)
    assert not mcp_site.is_registered("one")
    assert not mcp_site.is_registered("two")
    with pytest.raises(NotRegistered):
        mcp_site.unregister("one")


def test_a_fresh_site_does_not_touch_the_default_site(client, mcp_site):
    before = {spec.name for spec in default_site.get_tools()}

    @mcp_site.tool
    def private_to_this_test() -> str:
        return "x"

    assert {spec.name for spec in default_site.get_tools()} == before
    assert "private_to_this_test" not in before


# -- autodiscover ----------------------------------------------------------------------------


@pytest.fixture
def throwaway_app(monkeypatch):
    """``apps.get_app_configs()`` sees only the throwaway app; its site starts empty."""
    import tests.autodiscover_app as package
    from tests.autodiscover_app.registry import site

    config = types.SimpleNamespace(name=package.__name__, module=package)
    monkeypatch.setattr(apps, "get_app_configs", lambda: [config])
    for name in list(site._registry.tools):
        site.unregister(name)
    yield site
    for module in ("tests.autodiscover_app.mcp", "tests.autodiscover_app.mcp_ok"):
        sys.modules.pop(module, None)
    for name in list(site._registry.tools):
        site.unregister(name)


def test_autodiscover_rolls_back_a_broken_mcp_module(throwaway_app, mcp_site):
    """docs/guides/tools.md / sites.autodiscover: like admin.autodiscover, a broken mcp.py
    leaves every site as it was before the import and re-raises."""

    @throwaway_app.tool
    def kept() -> str:
        return "kept"

    @mcp_site.tool
    def elsewhere() -> str:
        return "x"

    default_before = {spec.name for spec in default_site.get_tools()}
    with pytest.raises(RuntimeError, match=r"broken mcp\.py"):
        autodiscover()
    assert [spec.name for spec in throwaway_app.get_tools()] == ["kept"]
    assert not throwaway_app.is_registered("half_registered")
    assert [spec.name for spec in mcp_site.get_tools()] == ["elsewhere"]
    assert {spec.name for spec in default_site.get_tools()} == default_before
    assert "tests.autodiscover_app.mcp" not in sys.modules


def test_autodiscover_imports_the_configured_module_of_each_app(throwaway_app):
    with override_mcp(AUTODISCOVER_MODULE="mcp_ok"):
        autodiscover()
    assert [spec.name for spec in throwaway_app.get_tools()] == ["discovered"]


def test_a_cursor_is_bound_to_its_caller_and_expires(client, mcp_site, django_user_model):
    """docs/settings.md (CURSOR_MAX_AGE): pagination cursors are signed and bound to the
    principal and an expiry; server/utilities/pagination.mdx: "Invalid cursors SHOULD result
    in an error with code -32602"."""
    for index in range(3):
        mcp_site.tool(name=f"t{index}")(lambda: "x")
    with override_mcp(PAGE_SIZE=2):
        cursor = result_of(mcp_post(client, "tools/list"))["nextCursor"]
        assert "tools" in result_of(mcp_post(client, "tools/list", {"cursor": cursor}))
        user = django_user_model.objects.create_user("cursor-holder", password="x")
        client.force_login(user)
        assert_error(mcp_post(client, "tools/list", {"cursor": cursor}), 200, -32602)
        client.logout()
    with override_mcp(PAGE_SIZE=2, CURSOR_MAX_AGE=0.000001):
        assert_error(mcp_post(client, "tools/list", {"cursor": cursor}), 200, -32602)


@pytest.mark.parametrize("max_age", [float("inf"), 10**20])
def test_a_cursor_max_age_past_a_timedelta_still_pages(client, mcp_site, max_age):
    """docs/settings.md (CURSOR_MAX_AGE: a positive number of seconds, which system check
    E004 accepts) and server/utilities/pagination.mdx (nextCursor leads to the next page).
    A maximum age past what ``datetime.timedelta`` holds made every cursor -32603: the age
    was turned into a timedelta before the signature was checked."""
    _register(mcp_site, ["a", "b"])
    with override_mcp(PAGE_SIZE=1, CURSOR_MAX_AGE=max_age):
        cursor = result_of(mcp_post(client, "tools/list"))["nextCursor"]
        page = result_of(mcp_post(client, "tools/list", {"cursor": cursor}))
    assert [tool["name"] for tool in page["tools"]] == ["b"]


def test_a_misspelt_decorator_option_is_refused_not_ignored(mcp_site):
    with pytest.raises(TypeError, match="readonly"):
        mcp_site.tool(readonly=True)(lambda: "x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="mimetype"):
        mcp_site.resource("x://y", mimetype="text/plain")(lambda: "x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="completers"):
        mcp_site.prompt(completers={})(lambda: "x")  # type: ignore[call-arg]
    assert mcp_site.get_tools() == []


def test_an_aliased_model_is_structured_as_type_adapter_dump_python_writes_it(client, mcp_site):
    """The result is serialised with the output adapter's core serializer directly; its
    ``by_alias`` default must be the one ``TypeAdapter.dump_python`` passes (pydantic-core
    before 2.30 defaults ``to_python`` to ``by_alias=True``, ``dump_python`` to False)."""
    from pydantic import TypeAdapter

    @mcp_site.tool
    def aliased() -> Aliased:
        return Aliased(bookTitle="Dune")

    expected = TypeAdapter(Aliased).dump_python(Aliased(bookTitle="Dune"), mode="json")
    assert call_result(client, "aliased")["structuredContent"] == expected


class Aliased(BaseModel):
    book_title: str = Field(alias="bookTitle")
