"""A pydantic form is sent as the flat ``requestedSchema`` schema.json allows.

client/elicitation.mdx, "Requested Schema": the form is "a restricted subset of JSON Schema"
(schema.json ``ElicitRequestFormParams.requestedSchema``): each property is a
``PrimitiveSchemaDefinition``, a string, number, boolean or enum schema with its ``type``,
no ``anyOf``, no ``$ref``. Pydantic spells an optional field ``anyOf: [X, {type: null}]``
with ``default: null``, and an ``Enum`` field a ``$ref`` into ``$defs``: a hostile review
found both sent as they were, an ``InputRequiredResult`` outside the schema (the conftest
validates every response against it), which a client may refuse whole.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest
from pydantic import BaseModel, Field

from django_mcp import Context
from django_mcp.sites import MCPSite
from tests.helpers import assert_valid, input_required, mcp_post, request_meta, result_of

pytestmark = pytest.mark.django_db

FORM_CLIENT = {"elicitation": {}}


class Colour(enum.StrEnum):
    RED = "red"
    BLUE = "blue"


class Order(BaseModel):
    colour: Colour
    shade: Colour = Colour.BLUE
    note: str | None = None
    count: int | None = Field(default=None, ge=1)
    extras: list[Colour] = []


@pytest.fixture
def ordering(mcp_site: MCPSite) -> str:
    @mcp_site.tool
    def order(ctx: Context) -> str:
        answer = ctx.elicit("Your order?", Order, key="order")
        return repr(answer.data)

    return "order"


def ask(client: Any, name: str, **params: Any) -> Any:
    return mcp_post(
        client,
        "tools/call",
        {"name": name, "arguments": {}, **params},
        meta=request_meta(capabilities=FORM_CLIENT),
    )


def test_optional_and_enum_fields_are_sent_as_flat_primitives(client: Any, ordering: str) -> None:
    """client/elicitation.mdx, "Requested Schema": each property a primitive schema."""
    first = input_required(ask(client, ordering))
    params = first["inputRequests"]["order"]["params"]
    schema = params["requestedSchema"]

    assert_valid(params, "ElicitRequestFormParams")
    assert "$defs" not in schema
    assert schema["properties"] == {
        "colour": {"type": "string", "enum": ["red", "blue"]},
        "shade": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
        "note": {"type": "string"},
        "count": {"type": "integer", "minimum": 1},
        "extras": {
            "type": "array",
            "items": {"type": "string", "enum": ["red", "blue"]},
            "default": [],
        },
    }
    assert schema["required"] == ["colour"]


def test_the_flat_form_still_validates_the_answer_by_the_model(client: Any, ordering: str) -> None:
    """client/elicitation.mdx: "Servers SHOULD validate received data matches the requested
    schema"; the model still checks the content, optional fields may be left out."""
    state = input_required(ask(client, ordering))["requestState"]
    answer = {"order": {"action": "accept", "content": {"colour": "red", "count": 2}}}

    result = result_of(ask(client, ordering, inputResponses=answer, requestState=state))

    assert "colour=<Colour.RED: 'red'>" in result["content"][0]["text"]
    assert "count=2" in result["content"][0]["text"]


class Address(BaseModel):
    colour: Colour


class Shipment(BaseModel):
    address: Address


def test_a_shape_left_unflattened_keeps_the_definitions_it_refers_to() -> None:
    """A nested model has no flat spelling and is sent as pydantic wrote it (the guide:
    keep the model flat). Its definition was inlined and ``$defs`` dropped all the same, so
    the ``$ref`` to its ``Enum`` field pointed at nothing: no longer even valid JSON
    Schema, which a client compiling the form (ajv, say) fails on."""
    import json

    from django_mcp.server.input_requests import requested_schema

    schema = requested_schema(Shipment)
    text = json.dumps(schema)
    assert '"$ref": "#/$defs/' in text
    refs = {part.split('"', 1)[0] for part in text.split('"$ref": "#/$defs/')[1:]}
    assert refs <= set(schema.get("$defs", {}))
