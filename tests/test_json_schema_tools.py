"""Hand-written JSON Schema 2020-12 for a tool (``@tool(input_schema=...)``).

server/tools.mdx (2026-07-28): ``inputSchema`` may use any JSON Schema 2020-12 keyword with
a root ``type: "object"``; it is published unchanged and enforced on every call.
"""

from __future__ import annotations

import pytest

from django_mcp.exceptions import InvalidDeclaration
from testproject.conformance.mcp import CONTACT_SCHEMA
from tests.helpers import call_tool, mcp_post, result_of


def listed(client, name):
    tools = result_of(mcp_post(client, "tools/list"))["tools"]
    return next(tool for tool in tools if tool["name"] == name)


@pytest.mark.django_db
def test_the_schema_is_published_unchanged(client):
    """No keyword stripped, no ``$ref`` resolved (``$defs``, ``$anchor``, ``if``...)."""
    assert listed(client, "json_schema_2020_12_tool")["inputSchema"] == CONTACT_SCHEMA


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"name": "Ada", "contactMethod": "phone"}, "'phone' is a required property"),
        ({"name": "Ada", "email": "a@b.c", "fax": "1"}, "Additional properties"),
        ({"email": "a@b.c", "address": {"city": 7}}, "address.city: 7 is not of type"),
        ({"email": "a@b.c", "contactMethod": "pigeon"}, "is not one of"),
    ],
)
def test_every_call_is_validated_with_a_clear_tool_error(client, arguments, problem):
    """A violation is a tool execution error (``isError: true``) naming what is wrong."""
    result = result_of(call_tool(client, "json_schema_2020_12_tool", arguments))
    assert result["isError"] is True
    assert problem in result["content"][0]["text"]


@pytest.mark.django_db
def test_a_valid_call_runs(client):
    arguments = {"name": "Ada", "contactMethod": "email", "email": "ada@example.com"}
    result = result_of(call_tool(client, "json_schema_2020_12_tool", arguments))
    assert "isError" not in result
    assert "ada@example.com" in result["content"][0]["text"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array"},
        {"type": "object", "properties": {"a": {"type": "nonsense"}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
    ],
)
def test_a_bad_schema_is_refused_at_declaration(mcp_site, schema):
    with pytest.raises(InvalidDeclaration):

        @mcp_site.tool(input_schema=schema)
        def tool() -> str:
            return ""
