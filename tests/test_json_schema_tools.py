"""Hand-written JSON Schema 2020-12 for a tool (``@tool(input_schema=...)``).

server/tools.mdx (2026-07-28): ``inputSchema`` may use any JSON Schema 2020-12 keyword with
a root ``type: "object"``; it is published unchanged and enforced on every call.
"""

from __future__ import annotations

from typing import Any

import pytest

from django_mcp import Context
from django_mcp.declarations.json_schema import DIALECT
from django_mcp.exceptions import InvalidDeclaration
from testproject.conformance.mcp import CONTACT_SCHEMA
from tests.helpers import call_tool, input_required, mcp_post, request_meta, result_of


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
        # not a Python regular expression: the metaschema's "regex" format is checked
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "\\p{L}"}}},
        {"type": "object", "patternProperties": {"[": {}}},
    ],
)
def test_a_bad_schema_is_refused_at_declaration(mcp_site, schema):
    with pytest.raises(InvalidDeclaration):

        @mcp_site.tool(input_schema=schema)
        def tool() -> str:
            return ""


NODE = {
    "type": "object",
    "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
}


def declare(mcp_site, schema):
    @mcp_site.tool(input_schema=schema)
    def probe(a: object = None) -> str:
        return "ran"


@pytest.mark.parametrize(
    ("a", "defs"),
    [
        ({"$ref": "#/$defs/Nope"}, {}),
        ({"$ref": "#nope"}, {}),
        ({"$dynamicRef": "#nope"}, {}),
        ({"$ref": "other.json"}, {}),
        ({"$ref": "#/required"}, {}),
        (
            {"$ref": "#/$defs/A"},
            {"A": {"$ref": "#/$defs/B"}, "B": {"allOf": [{"$ref": "#/$defs/A"}]}},
        ),
        ({"$ref": "#/properties/a"}, {}),
        ({"$ref": "#/$defs/A"}, {"A": {"if": {"type": "string"}, "then": {"$ref": "#/$defs/A"}}}),
    ],
    ids=["pointer", "anchor", "dynamic", "relative", "not-a-schema", "cycle", "self", "if-cycle"],
)
def test_a_ref_that_cannot_be_evaluated_is_refused_at_declaration(mcp_site, a, defs):
    """A ``$ref`` naming nothing (or no schema) passed ``check_schema``, and then every
    call failed with -32603 (``jsonschema`` resolves a reference only when a call reaches
    it); a cycle that never descends into the arguments recursed until RecursionError.
    Both are the author's mistake: refused where the tool is declared."""
    schema = {"type": "object", "required": ["a"], "$defs": defs, "properties": {"a": a}}
    with pytest.raises(InvalidDeclaration, match=r"\$ref"):
        declare(mcp_site, schema)


def test_a_remote_ref_is_refused_at_declaration_and_never_fetched(mcp_site, monkeypatch):
    """``jsonschema``'s default registry fetched an ``http(s)`` ``$ref`` with ``urlopen``
    in the request that reached it (a stall, and a request to wherever the schema
    points); nothing is ever fetched, so such a ``$ref`` cannot resolve: refused."""
    fetched: list[object] = []
    monkeypatch.setattr("urllib.request.urlopen", lambda *a, **k: fetched.append(a))
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}
    with pytest.raises(InvalidDeclaration, match="does not resolve"):
        declare(mcp_site, schema)
    assert fetched == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("schema", "good", "bad", "problem"),
    [
        (  # recursive, descending into the arguments: bounded by the JSON depth limit
            {
                "type": "object",
                "$defs": {"node": NODE},
                "properties": {"a": {"$ref": "#/$defs/node"}},
            },
            {"kids": [{"kids": [{"kids": []}]}]},
            {"kids": [{"kids": 5}]},
            "a.kids.0.kids: 5 is not of type 'array'",
        ),
        (  # the bundled 2020-12 metaschema: resolved offline
            {"type": "object", "properties": {"a": {"$ref": DIALECT}}},
            {"type": "string"},
            {"type": 5},
            "a.type: 5 is not valid",
        ),
        (  # $id and $anchor name schemas inside the document
            {
                "type": "object",
                "$defs": {
                    "x": {"$id": "https://example.com/x", "type": "string"},
                    "y": {"$anchor": "x", "minLength": 1},
                },
                "properties": {"a": {"allOf": [{"$ref": "https://example.com/x"}, {"$ref": "#x"}]}},
            },
            "text",
            5,
            "a: 5 is not of type 'string'",
        ),
        (  # 2020-12: format is an annotation; an unknown one asserts nothing
            {"type": "object", "properties": {"a": {"type": "string", "format": "no-such-format"}}},
            "anything",
            5,
            "a: 5 is not of type 'string'",
        ),
    ],
    ids=["recursive", "metaschema", "id-anchor", "unknown-format"],
)
def test_odd_but_valid_schemas_are_served(
    mcp_site, client, monkeypatch, schema, good, bad, problem
):
    """server/tools.mdx: any 2020-12 keyword; a call is run or answered with a tool
    execution error naming the violation, never -32603, and nothing is fetched."""
    monkeypatch.setattr("urllib.request.urlopen", lambda *a, **k: pytest.fail("fetched"))
    declare(mcp_site, schema)
    assert result_of(call_tool(client, "probe", {"a": good}))["content"][0]["text"] == "ran"
    result = result_of(call_tool(client, "probe", {"a": bad}))
    assert result["isError"] is True
    assert problem in result["content"][0]["text"]


@pytest.mark.django_db
def test_a_tool_that_edits_its_nested_arguments_can_still_ask_for_input(client, mcp_site):
    """basic/patterns/mrtr.mdx: the client retries with "the same method and params", and the
    server binds ``requestState`` to "the originating request". The state is sealed when the
    round ends, after the handler ran; a hand-schema tool got the request's own nested
    objects, so one that filled in a default in place (``row.setdefault("qty", 1)``) sealed
    a state bound to arguments the client never sent, and every retry was refused as
    another request's (-32602). The function must get a copy."""
    schema = {"type": "object", "properties": {"rows": {"type": "array"}}, "required": ["rows"]}

    @mcp_site.tool(input_schema=schema)
    def order(ctx: Context, rows: list[dict[str, Any]]) -> str:
        for row in rows:
            row.setdefault("qty", 1)
        answer = ctx.elicit("Confirm?", {"ok": bool}, key="ok")
        return f"{rows} {answer.action}"

    meta = request_meta(capabilities={"elicitation": {}})
    params = {"name": "order", "arguments": {"rows": [{"sku": "a"}]}}
    state = input_required(mcp_post(client, "tools/call", params, meta=meta))["requestState"]
    answer = {"ok": {"action": "accept", "content": {"ok": True}}}
    retry = {**params, "requestState": state, "inputResponses": answer}

    result = result_of(mcp_post(client, "tools/call", retry, meta=meta))

    assert result["content"][0]["text"] == "[{'sku': 'a', 'qty': 1}] accept"
