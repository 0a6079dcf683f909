"""What a prompt returns, checked before it reaches the wire (server/prompts.mdx).

``PromptMessage`` has a ``role`` of ``user`` or ``assistant`` (schema ``Role``) and one
content block. A :class:`Message` built with another role (``"system"``, which other APIs
have), or with content that is no block, used to be sent as it was: a ``GetPromptResult``
the schema refuses, or a second block silently dropped. It is now refused where it is built,
so the prompt fails as any failing prompt does: -32603 (server/prompts.mdx, "Error
Handling": internal errors), logged with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from django_mcp import Audio, EmbeddedResource, Image, Message, ResourceContents, ResourceLink, Text
from django_mcp.protocol import errors
from tests.helpers import assert_error, mcp_post

if TYPE_CHECKING:
    from django.test import Client

    from django_mcp.sites import MCPSite

pytestmark = pytest.mark.usefixtures("no_request_log")

BAD = {
    "system-role": lambda: Message("system", "Be terse."),  # type: ignore[arg-type]
    "number-role": lambda: Message(5, "x"),  # type: ignore[arg-type]
    "no-content": lambda: Message("user", None),  # type: ignore[arg-type]
    "number-content": lambda: Message("user", 5),  # type: ignore[arg-type]
    "two-blocks": lambda: Message("user", ["first", "second"]),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("build", BAD.values(), ids=BAD.keys())
def test_a_message_the_schema_refuses_cannot_be_built(build: Any) -> None:
    """server/prompts.mdx, "PromptMessage": role is "user" or "assistant"; content is one
    content block."""
    with pytest.raises(TypeError):
        build()


@pytest.mark.parametrize("build", BAD.values(), ids=BAD.keys())
def test_a_prompt_returning_such_a_message_is_an_internal_error(
    client: Client, mcp_site: MCPSite, build: Any, caplog: Any
) -> None:
    """server/prompts.mdx, "Error Handling": -32603, never a result the schema refuses
    (every response here is checked against the 2026-07-28 schema by the conftest)."""
    mcp_site.prompt(name="bad")(lambda: build())

    assert_error(mcp_post(client, "prompts/get", {"name": "bad"}), 200, errors.INTERNAL_ERROR)
    assert "PromptMessage" in caplog.text


def test_good_messages_still_pass(client: Client, mcp_site: MCPSite) -> None:
    """server/prompts.mdx, "PromptMessage": both roles, text or a block."""
    mcp_site.prompt(name="good")(lambda: [Message("assistant", Text("a")), Message("user", "b")])

    result = mcp_post(client, "prompts/get", {"name": "good"}).json()["result"]
    assert [m["role"] for m in result["messages"]] == ["assistant", "user"]


TEXTS = {"none": None, "number": 5, "bytes": b"x"}


@pytest.mark.parametrize("value", TEXTS.values(), ids=TEXTS.keys())
def test_a_text_block_of_no_string_is_refused_where_it_is_built(
    client: Client, mcp_site: MCPSite, value: Any
) -> None:
    """server/prompts.mdx, "Text Content": ``text`` is a string. ``Text(None)`` used to go
    out as ``{"type": "text", "text": null}``, which the schema refuses; now the prompt
    fails: -32603 ("Error Handling")."""
    with pytest.raises(TypeError):
        Text(value)
    mcp_site.prompt(name="bad")(lambda: Text(value))

    assert_error(mcp_post(client, "prompts/get", {"name": "bad"}), 200, errors.INTERNAL_ERROR)


BAD_BLOCKS = {
    "image-mime-none": lambda: Image(b"\x89PNG", mime_type=None),  # type: ignore[arg-type]
    "image-data-number": lambda: Image(5),  # type: ignore[arg-type]
    "audio-mime-number": lambda: Audio(b"RIFF", mime_type=5),  # type: ignore[arg-type]
    "link-uri-number": lambda: ResourceLink(5, "x"),  # type: ignore[arg-type]
    "link-name-none": lambda: ResourceLink("a://b", None),  # type: ignore[arg-type]
    "link-size-text": lambda: ResourceLink("a://b", "b", size="1"),  # type: ignore[arg-type]
    "link-size-bool": lambda: ResourceLink("a://b", "b", size=True),
    "contents-uri-none": lambda: ResourceContents(None, text="x"),  # type: ignore[arg-type]
    "contents-text-bytes": lambda: ResourceContents("a://b", text=b"x"),  # type: ignore[arg-type]
    "embedded-dict": lambda: EmbeddedResource({"uri": "a://b", "text": "x"}),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("build", BAD_BLOCKS.values(), ids=BAD_BLOCKS.keys())
def test_a_block_the_schema_refuses_cannot_be_built(build: Any) -> None:
    """server/tools.mdx and server/prompts.mdx, content types: each field of an image,
    audio, resource link or embedded resource block holds what the schema says (a
    string ``uri``, ``name`` and ``mimeType``, an integer ``size``...). A block holding
    anything else is refused where it is built, named, instead of going out for the
    client to refuse."""
    with pytest.raises(TypeError):
        build()


def test_a_tool_returning_a_link_of_no_string_uri_fails_instead_of_sending_it(
    client: Client, mcp_site: MCPSite, settings: Any
) -> None:
    """server/tools.mdx, "Resource Links": ``uri`` is a string. ``ResourceLink(5, "x")``
    went out as ``{"type": "resource_link", "uri": 5, ...}``, a ``CallToolResult`` the
    schema refuses; now the tool fails where it built the link."""
    settings.DEBUG = False
    mcp_site.tool(name="link")(lambda: ResourceLink(5, "x"))  # type: ignore[arg-type]

    response = mcp_post(client, "tools/call", {"name": "link", "arguments": {}})
    assert "resource_link" not in response.content.decode()


def test_good_blocks_still_build() -> None:
    """The same blocks with the values the schema allows, bytes-like data included."""
    assert Image(bytearray(b"\x89PNG")).to_dict()["data"] == "iVBORw=="
    assert Audio(memoryview(b"RIFF"), mime_type="audio/wav").to_dict()["type"] == "audio"
    link = ResourceLink("a://b", "b", title=None, size=3).to_dict()
    assert link == {"type": "resource_link", "uri": "a://b", "name": "b", "size": 3}
    embedded = EmbeddedResource(ResourceContents("a://b", blob=b"x")).to_dict()
    assert embedded["resource"] == {"uri": "a://b", "blob": "eA=="}
