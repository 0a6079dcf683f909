"""``x-mcp-header`` however a tool's schema got it: checked on every call, or refused when
the tool is declared.

basic/transports/streamable-http.mdx, "Custom Headers from Tool Parameters": servers MUST
validate that each ``Mcp-Param-{Name}`` header matches the body and MUST reject a request
whose header is missing while the value is in the body (400, -32020), so that a load
balancer routing on the header and the server acting on the body cannot disagree. Before,
only ``MCPHeader`` markers were checked: a hand-written ``input_schema`` or a pydantic
field's ``json_schema_extra`` published a marker nobody enforced.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from django_mcp import MCPHeader
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol.header_schema import header_params
from tests.helpers import assert_error, call_tool, result_of

pytestmark = pytest.mark.django_db

ROUTED = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    "required": ["region"],
}


def text_of(response: Any) -> str:
    text: str = result_of(response)["content"][0]["text"]
    return text


@pytest.fixture
def routes(mcp_site):
    @mcp_site.tool(input_schema=ROUTED)
    def hand_written(region: str) -> str:
        return f"routed to {region}"

    @mcp_site.tool
    def field_extra(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    ) -> str:
        return f"routed to {region}"

    return mcp_site


@pytest.mark.parametrize("tool", ["hand_written", "field_extra"])
def test_a_header_that_disagrees_with_the_body_is_refused(client, routes, tool):
    response = call_tool(client, tool, {"region": "us-east"}, headers={"Mcp-Param-Region": "eu"})
    assert_error(response, 400, -32020)


@pytest.mark.parametrize("tool", ["hand_written", "field_extra"])
def test_a_missing_header_is_refused(client, routes, tool):
    assert_error(call_tool(client, tool, {"region": "us-east"}), 400, -32020)


@pytest.mark.parametrize("tool", ["hand_written", "field_extra"])
def test_a_matching_header_is_served(client, routes, tool):
    response = call_tool(client, tool, {"region": "eu"}, headers={"Mcp-Param-Region": "eu"})
    assert text_of(response) == "routed to eu"


def anything(target: Any = None, regions: Any = None, region: Any = None, value: Any = None) -> str:
    return "x"


class Target(BaseModel):
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]


NESTED = {
    "type": "object",
    "properties": {
        "target": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        }
    },
}
IN_ITEMS = {
    "type": "object",
    "properties": {
        "regions": {"type": "array", "items": {"type": "string", "x-mcp-header": "Region"}}
    },
}
IN_DEFS = {
    "type": "object",
    "$defs": {"Region": {"type": "string", "x-mcp-header": "Region"}},
    "properties": {"region": {"$ref": "#/$defs/Region"}},
}


@pytest.mark.parametrize("schema", [NESTED, IN_ITEMS, IN_DEFS], ids=["nested", "items", "defs"])
def test_a_marker_off_the_top_level_is_refused_at_declaration(mcp_site, schema):
    """A chain through ``items`` or ``$ref`` makes the tool definition invalid (clients drop
    it); SEP-2243's table refuses nested properties too. Served, such a marker would be
    published and never checked."""
    with pytest.raises(InvalidDeclaration, match="not on a top-level property"):
        mcp_site.tool(input_schema=schema)(anything)


def test_a_pydantic_model_argument_with_a_marked_field_is_refused(mcp_site):
    """pydantic publishes the nested model under ``$defs``, reached through ``$ref``."""

    def route(target: Target) -> str:
        return target.region

    with pytest.raises(InvalidDeclaration, match="not on a top-level property"):
        mcp_site.tool(route)


def test_a_header_name_with_an_underscore_is_refused_at_declaration(mcp_site):
    """``Tenant_Id`` is a token, but gunicorn and Django's ASGI handler drop a header whose
    name holds ``_``: no client could ever send ``Mcp-Param-Tenant_Id`` to this server, so
    every call with the argument would be refused."""

    def tenanted(tenant: Annotated[str, MCPHeader("Tenant_Id")]) -> str:
        return tenant

    with pytest.raises(InvalidDeclaration, match="holds '_'"):
        mcp_site.tool(tenanted)


@pytest.mark.parametrize(
    "prop",
    [{"type": "number"}, {"type": "object"}, {"type": ["string", "integer"]}, {}],
    ids=["number", "object", "two-types", "untyped"],
)
def test_a_hand_written_marker_on_a_property_of_another_type_is_refused(mcp_site, prop):
    """x-mcp-header applies to string, integer and boolean properties only."""
    schema = {"type": "object", "properties": {"value": {**prop, "x-mcp-header": "Value"}}}
    with pytest.raises(InvalidDeclaration, match="string, integer or boolean"):
        mcp_site.tool(input_schema=schema)(anything)


def test_a_property_named_like_the_marker_or_a_marker_in_data_is_no_marker():
    """Names in ``properties`` and values in ``default`` or ``examples`` are not keywords."""
    schema = {
        "type": "object",
        "properties": {
            "x-mcp-header": {"type": "object", "default": {"x-mcp-header": "A"}},
            "region": {"type": "string", "examples": [{"x-mcp-header": "B"}]},
        },
    }
    assert header_params(schema) == {}


class Region(StrEnum):
    EU = "eu"
    US = "us"


def test_an_enum_argument_is_a_string_header(client, mcp_site):
    """pydantic describes an ``Enum`` argument as a ``$ref`` into ``$defs``: its type is read
    there (the declaration was refused as "not a string, integer or boolean")."""

    @mcp_site.tool
    def regional(region: Annotated[Region, MCPHeader("Region")]) -> str:
        return f"routed to {region.value}"

    served = call_tool(client, "regional", {"region": "eu"}, headers={"Mcp-Param-Region": "eu"})
    assert text_of(served) == "routed to eu"
    refused = call_tool(client, "regional", {"region": "eu"}, headers={"Mcp-Param-Region": "us"})
    assert_error(refused, 400, -32020)


@pytest.mark.parametrize("arguments", [{}, {"region": None}], ids=["absent", "null"])
def test_a_header_for_an_argument_the_body_lacks_is_refused(client, mcp_site, arguments):
    """basic/transports/streamable-http.mdx, "Server Validation": servers MUST reject a
    request whose header values do not match the body, so that a load balancer routing on
    the header and the server acting on the body cannot disagree. ``Mcp-Param-Region: us``
    with no ``region`` in the body ran the tool with its default, ``eu``, while the proxy
    routed the call as ``us``. Without the header, the call is served ("Parameter not in
    arguments: Server MUST NOT expect the header")."""

    @mcp_site.tool
    def defaulted(region: Annotated[str | None, MCPHeader("Region")] = None) -> str:
        return f"routed to {region or 'eu'}"

    refused = call_tool(client, "defaulted", arguments, headers={"Mcp-Param-Region": "us"})
    assert_error(refused, 400, -32020)
    assert text_of(call_tool(client, "defaulted", arguments)) == "routed to eu"
