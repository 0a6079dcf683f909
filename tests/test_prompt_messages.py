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

from django_mcp import Message, Text
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
