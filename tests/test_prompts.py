"""Prompts through HTTP: prompts/list and prompts/get (server/prompts.mdx).

This module is its own URLconf: the example site of docs/examples/prompts_example.py is
served at /example/mcp and a fresh site with the edge cases at /mcp. Every response is
checked against the 2026-07-28 schema by the suite's conftest.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path

from django_mcp import Context, Message, Text, assistant, user
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol import errors
from django_mcp.sites import MCPSite
from docs.examples import prompts_example
from testproject.books.models import Book
from tests.helpers import assert_error, mcp_post, result_of

if TYPE_CHECKING:
    from django.test import Client

EXAMPLE = "/example/mcp"

site = MCPSite(name="test-prompts")


@site.prompt(icons=[{"src": "https://example.com/p.png", "mimeType": "image/png"}], meta={"x": 1})
def plain() -> str:
    """A prompt without arguments."""
    return "Just text."


@site.prompt
def one_message() -> Message:
    """Returns a single Message rather than a list."""
    return assistant("I am the assistant.")


@site.prompt
def mixed(count: int, note: str | None = None) -> list[Message | str]:
    """Mixes strings and messages; ``count`` arrives as a string and is converted."""
    return ["first", assistant(Text(f"count is {count + 1}")), f"note={note}"]


@site.prompt
async def later(topic: str) -> str:
    """An async prompt."""
    return f"Tell me about {topic}."


@site.prompt
def who(ctx: Context) -> str:
    """Receives the Context, which is not an argument."""
    return f"method={ctx.method} client={ctx.client_info.name if ctx.client_info else '?'}"


@site.prompt
def broken() -> str:
    """Fails inside: an internal error."""
    raise RuntimeError("boom")


urlpatterns = [path("mcp", site.urls), path("example/mcp", prompts_example.site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.usefixtures("no_request_log")]


def get_prompt(client: Client, name: str, arguments: Any = None, *, at: str = "/mcp") -> Any:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return mcp_post(client, "prompts/get", params, path=at)


def list_prompts(client: Client, *, at: str = "/mcp", **params: Any) -> dict[str, Any]:
    return result_of(mcp_post(client, "prompts/list", params, path=at))


# -- prompts/list ------------------------------------------------------------------------------


def test_prompts_list_describes_each_prompt_with_its_arguments(client: Client) -> None:
    """server/prompts.mdx, "Listing Prompts" and "Prompt": name, title, description and
    arguments (name, description, required) for each prompt."""
    prompts = {p["name"]: p for p in list_prompts(client, at=EXAMPLE)["prompts"]}

    assert prompts["review"] == {
        "name": "review",
        "title": "Review a book",
        "description": "Ask the model for a short review of one book.",
        "arguments": [
            {"name": "isbn", "description": "ISBN of the book to review.", "required": True},
            {"name": "tone", "required": False},
        ],
    }
    assert prompts["greeting"] == {
        "name": "greeting",
        "description": "Start a conversation with the bookshop's assistant.",
    }


def test_prompts_list_is_ordered_by_name_and_carries_cache_hints(client: Client) -> None:
    """server/prompts.mdx, "Listing Prompts": the result carries ttlMs and cacheScope
    (server/utilities/caching.mdx, CacheableResult); with nothing gated the list is the same
    for everyone, so it is public."""
    result = list_prompts(client, at=EXAMPLE)

    assert [p["name"] for p in result["prompts"]] == [
        "announce",
        "describe_cover",
        "greeting",
        "review",
    ]
    assert result["ttlMs"] == 60_000
    assert result["cacheScope"] == "public"
    assert "nextCursor" not in result


def test_prompt_icons_and_meta_are_listed(client: Client) -> None:
    """server/prompts.mdx, "Prompt": icons is an optional array of icons; _meta passes
    through."""
    prompts = {p["name"]: p for p in list_prompts(client)["prompts"]}

    assert prompts["plain"]["icons"] == [
        {"src": "https://example.com/p.png", "mimeType": "image/png"}
    ]
    assert prompts["plain"]["_meta"] == {"x": 1}
    assert "ctx" not in json.dumps(prompts["who"])


def test_prompts_list_pages_with_signed_cursors(client: Client, settings: Any) -> None:
    """server/utilities/pagination.mdx: the server chooses the
    page size, returns nextCursor while more remain, and the cursor is opaque."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "PAGE_SIZE": 4}
    first = list_prompts(client)
    second = list_prompts(client, cursor=first["nextCursor"])

    names = [p["name"] for p in first["prompts"]] + [p["name"] for p in second["prompts"]]
    assert names == sorted(p.__name__ for p in (plain, one_message, mixed, later, who, broken))
    assert len(first["prompts"]) == 4
    assert "nextCursor" not in second
    assert second["cacheScope"] == first["cacheScope"]


def test_a_forged_cursor_is_invalid_params(client: Client) -> None:
    """server/utilities/pagination.mdx: invalid cursors SHOULD get -32602."""
    response = mcp_post(client, "prompts/list", {"cursor": "not-a-cursor"})

    assert_error(response, 200, errors.INVALID_PARAMS)


def test_a_cursor_from_another_listing_is_refused(client: Client, settings: Any) -> None:
    """server/utilities/pagination.mdx: a cursor is only meaningful for the listing that
    issued it; a tools/list cursor replayed on prompts/list is an invalid cursor."""
    from django_mcp.server.pagination import encode_cursor

    cursor = encode_cursor(site.name, "tools/list", "a")
    response = mcp_post(client, "prompts/list", {"cursor": cursor})

    assert_error(response, 200, errors.INVALID_PARAMS)


def test_prompts_methods_do_not_exist_on_a_site_without_prompts(
    client: Client, mcp_site: MCPSite
) -> None:
    """server/prompts.mdx, "Capabilities": servers that support prompts MUST declare the
    capability; a method whose capability is not advertised is -32601, HTTP 404
    (basic/transports/streamable-http.mdx)."""
    mcp_site.tool(lambda: "x", name="t")

    discovered = result_of(mcp_post(client, "server/discover"))
    assert "prompts" not in discovered["capabilities"]
    assert_error(mcp_post(client, "prompts/list"), 404, errors.METHOD_NOT_FOUND)
    assert_error(get_prompt(client, "anything"), 404, errors.METHOD_NOT_FOUND)


def test_discover_advertises_prompts(client: Client) -> None:
    """server/prompts.mdx, "Capabilities": the prompts capability is declared in
    DiscoverResult."""
    result = result_of(mcp_post(client, "server/discover", path=EXAMPLE))

    assert "prompts" in result["capabilities"]


# -- prompts/get -------------------------------------------------------------------------------


def test_a_prompt_returning_a_string_is_one_user_text_message(client: Client) -> None:
    """server/prompts.mdx, "Getting a Prompt" and "Text Content": messages have a role
    and one content block; the result carries the prompt's description."""
    result = result_of(get_prompt(client, "greeting", at=EXAMPLE))

    assert result["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": "Hello! Which books would you recommend this week?",
            },
        }
    ]
    assert result["description"] == "Start a conversation with the bookshop's assistant."


def test_prompt_arguments_fill_the_messages(client: Client, book: Book) -> None:
    """server/prompts.mdx, "Getting a Prompt": arguments customise the prompt; roles are
    "user" or "assistant" (PromptMessage)."""
    result = result_of(
        get_prompt(client, "review", {"isbn": book.isbn, "tone": "friendly"}, at=EXAMPLE)
    )

    assert result["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": "Write a friendly review of 'Dune' by Frank Herbert.",
            },
        },
        {"role": "assistant", "content": {"type": "text", "text": "Here is a short review:"}},
    ]


def test_an_optional_argument_takes_its_default(client: Client, book: Book) -> None:
    """server/prompts.mdx, "Prompt": arguments not marked required may be left out."""
    result = result_of(get_prompt(client, "review", {"isbn": book.isbn}, at=EXAMPLE))

    assert "a neutral review" in result["messages"][0]["content"]["text"]


def test_image_and_embedded_resource_content(client: Client, book: Book) -> None:
    """server/prompts.mdx, "Image Content" and "Embedded Resources": image data is base64
    with a MIME type; an embedded resource has uri, mimeType and text, and content may
    carry annotations."""
    messages = result_of(get_prompt(client, "describe_cover", {"isbn": book.isbn}, at=EXAMPLE))[
        "messages"
    ]

    image, embedded, question = (m["content"] for m in messages)
    assert image == {
        "type": "image",
        "data": base64.b64encode(prompts_example.COVER_PNG).decode(),
        "mimeType": "image/png",
    }
    assert embedded == {
        "type": "resource",
        "resource": {
            "uri": "books://9780441013593",
            "mimeType": "application/json",
            "text": json.dumps({"isbn": "9780441013593", "title": "Dune"}),
        },
        "annotations": {"audience": ["assistant"], "priority": 0.8},
    }
    assert question == {"type": "text", "text": "Does this cover suit the book?"}


def test_audio_content(client: Client) -> None:
    """server/prompts.mdx, "Audio Content": data is base64 and mimeType is given."""
    messages = result_of(get_prompt(client, "announce", {"title": "Dune"}, at=EXAMPLE))["messages"]

    assert messages[0]["content"] == {
        "type": "audio",
        "data": base64.b64encode(prompts_example.CHIME_WAV).decode(),
        "mimeType": "audio/wav",
    }
    assert messages[1]["content"]["text"] == "New arrival: Dune!"


def test_a_single_message_and_mixed_lists(client: Client) -> None:
    """server/prompts.mdx, "PromptMessage": a prompt may return one message, or strings
    (user text) mixed with messages; arguments arrive as strings and are converted."""
    single = result_of(get_prompt(client, "one_message"))["messages"]
    several = result_of(get_prompt(client, "mixed", {"count": "41"}))["messages"]

    assert single == [
        {"role": "assistant", "content": {"type": "text", "text": "I am the assistant."}}
    ]
    assert several == [
        {"role": "user", "content": {"type": "text", "text": "first"}},
        {"role": "assistant", "content": {"type": "text", "text": "count is 42"}},
        {"role": "user", "content": {"type": "text", "text": "note=None"}},
    ]


def test_async_prompts_and_the_context(client: Client) -> None:
    """server/prompts.mdx, "Getting a Prompt": async prompt functions are awaited; a
    Context parameter is injected, not an argument."""
    assert result_of(get_prompt(client, "later", {"topic": "sand"}))["messages"][0]["content"] == {
        "type": "text",
        "text": "Tell me about sand.",
    }
    text = result_of(get_prompt(client, "who"))["messages"][0]["content"]["text"]
    assert text == "method=prompts/get client=pytest"


def test_the_message_helpers_build_roles() -> None:
    """server/prompts.mdx, "PromptMessage": role is "user" or "assistant"."""
    assert user("hi").to_dict() == {"role": "user", "content": {"type": "text", "text": "hi"}}
    assert assistant("yo").to_dict()["role"] == "assistant"


# -- errors ------------------------------------------------------------------------------------


def test_an_unknown_prompt_is_invalid_params_naming_it(client: Client) -> None:
    """server/prompts.mdx, "Error Handling": invalid prompt name: -32602."""
    error = assert_error(get_prompt(client, "nope"), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"name": "nope"}


def test_a_missing_required_argument_is_invalid_params(client: Client) -> None:
    """server/prompts.mdx, "Error Handling": missing required arguments: -32602."""
    error = assert_error(get_prompt(client, "review", {}, at=EXAMPLE), 200, errors.INVALID_PARAMS)

    assert [item["argument"] for item in error["data"]["errors"]] == ["isbn"]


def test_a_value_outside_a_literal_is_invalid_params(client: Client) -> None:
    """server/prompts.mdx, "Implementation Considerations": servers SHOULD validate prompt
    arguments before processing; a bad value is -32602."""
    response = get_prompt(client, "review", {"isbn": "1", "tone": "angry"}, at=EXAMPLE)

    error = assert_error(response, 200, errors.INVALID_PARAMS)
    assert [item["argument"] for item in error["data"]["errors"]] == ["tone"]


def test_a_non_string_argument_value_is_invalid_params(client: Client) -> None:
    """server/prompts.mdx, "Getting a Prompt": arguments map names to string
    values; anything else breaks the request. Each one is named in ``data.errors``, as
    every other bad argument is (docs/guides/prompts.md)."""
    response = get_prompt(client, "mixed", {"count": 3, "note": None})
    error = assert_error(response, 200, errors.INVALID_PARAMS)

    assert error["data"] == {
        "errors": [
            {"argument": "count", "message": "Input should be a string"},
            {"argument": "note", "message": "Input should be a string"},
        ]
    }


@pytest.mark.parametrize("arguments", [[], "", 0, False, ["a"], "x"])
def test_arguments_that_are_not_an_object_are_invalid_params(
    client: Client, arguments: Any
) -> None:
    """server/prompts.mdx, "Getting a Prompt" (schema GetPromptRequestParams): arguments is
    an object of strings; anything else present is -32602, empty or falsy values too."""
    response = mcp_post(client, "prompts/get", {"name": "plain", "arguments": arguments})

    assert_error(response, 200, errors.INVALID_PARAMS)


def test_null_arguments_count_as_absent(client: Client) -> None:
    """server/prompts.mdx, "Getting a Prompt": arguments is optional; null is taken as
    not given."""
    response = mcp_post(client, "prompts/get", {"name": "plain", "arguments": None})

    assert result_of(response)["messages"]


def test_every_bad_argument_is_named_beside_a_non_string_one(client: Client) -> None:
    """docs/guides/prompts.md: ``data.errors`` names each bad argument; a non-string value
    does not hide a missing required one, nor one the prompt does not declare."""
    response = get_prompt(client, "mixed", {"note": 5, "extra": "x"})
    error = assert_error(response, 200, errors.INVALID_PARAMS)

    named = {item["argument"]: item["message"] for item in error["data"]["errors"]}
    assert named.keys() == {"note", "count", "extra"}
    assert named["note"] == "Input should be a string"


def test_an_unconvertible_argument_is_invalid_params(client: Client) -> None:
    """server/prompts.mdx, "Implementation Considerations": an argument that does not
    convert to its declared type is -32602."""
    error = assert_error(get_prompt(client, "mixed", {"count": "many"}), 200, errors.INVALID_PARAMS)

    assert [item["argument"] for item in error["data"]["errors"]] == ["count"]


def test_an_undeclared_argument_is_invalid_params(client: Client) -> None:
    """server/prompts.mdx, "Implementation Considerations": servers SHOULD validate prompt
    arguments; an argument the prompt does not declare is refused with -32602."""
    error = assert_error(get_prompt(client, "plain", {"extra": "x"}), 200, errors.INVALID_PARAMS)

    assert [item["argument"] for item in error["data"]["errors"]] == ["extra"]


@pytest.mark.django_db
def test_an_argument_naming_a_missing_row_is_invalid_params(client: Client) -> None:
    """server/prompts.mdx, "Error Handling": -32602 for bad arguments, -32603 only for
    internal errors; a prompt raising DoesNotExist was given an argument naming nothing."""
    error = assert_error(
        get_prompt(client, "review", {"isbn": "0000000000000"}, at=EXAMPLE),
        200,
        errors.INVALID_PARAMS,
    )

    assert error["data"] == {"name": "review"}


def test_a_failing_prompt_is_an_internal_error(client: Client, settings: Any) -> None:
    """server/prompts.mdx, "Error Handling": internal errors: -32603 (masked outside
    DEBUG)."""
    settings.DEBUG = False
    error = assert_error(get_prompt(client, "broken"), 200, errors.INTERNAL_ERROR)

    assert "boom" not in json.dumps(error)


def test_prompt_declarations_are_checked_when_registered() -> None:
    """server/prompts.mdx, "Prompt": a prompt has a name; completers must name one of its
    arguments."""
    other = MCPSite(name="declarations")
    with pytest.raises(InvalidDeclaration):
        other.prompt(name="has space")(lambda: "x")
    with pytest.raises(InvalidDeclaration):
        other.prompt(complete={"nope": lambda value: []})(plain)
