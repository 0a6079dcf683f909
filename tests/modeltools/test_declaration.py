"""ModelTools declarations as clients see them in tools/list (server/tools.mdx).

The module is its own URLconf: the example site of docs/examples/modeltools_example.py is
served at /example/mcp and a fresh site with plainer declarations at /mcp.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path
from jsonschema import Draft202012Validator

import django_mcp
from django_mcp.exceptions import AlreadyRegistered, InvalidDeclaration, NotRegistered
from django_mcp.sites import MCPSite
from docs.examples import modeltools_example
from testproject.books.models import Author, Book
from tests.helpers import mcp_post, result_of

if TYPE_CHECKING:
    from django.test import Client

EXAMPLE = "/example/mcp"

site = MCPSite(name="modeltools-declaration")
site.register(Author)  # no options at all: list and get, every field


@django_mcp.register(Book, site=site)
class VolumeTools(django_mcp.ModelTools):
    name = "volume"
    exclude = ["price", "published"]
    actions = ["list", "get", "create", "update", "delete"]


urlpatterns = [path("mcp", site.urls), path("example/mcp", modeltools_example.site.urls)]

pytestmark = pytest.mark.urls(__name__)


def tools(client: Client, *, at: str = "/mcp") -> dict[str, dict[str, Any]]:
    listed = result_of(mcp_post(client, "tools/list", path=at))["tools"]
    return {tool["name"]: tool for tool in listed}


def test_reads_are_on_by_default_and_writes_opt_in(client: Client) -> None:
    """server/tools.mdx, "Listing Tools": each action is one tool, named
    <model>_<action>; a ModelTools without ``actions`` exposes only list and get."""
    names = set(tools(client))

    assert {"author_list", "author_get"} <= names
    assert not {"author_create", "author_update", "author_delete"} & names
    assert {f"volume_{a}" for a in ("list", "get", "create", "update", "delete")} <= names


def test_tool_names_can_be_overridden(client: Client, boss: Any) -> None:
    """server/tools.mdx, "Tool Names": names are 1-128 characters of A-Z a-z 0-9 _ - .;
    ``tool_names`` renames single actions, ``name`` the prefix."""
    client.force_login(boss)
    names = set(tools(client, at=EXAMPLE))

    assert names == {
        "author_list",
        "author_get",
        "search_books",
        "book_get",
        "book_create",
        "book_update",
        "book_delete",
    }


def test_descriptions_come_from_verbose_names_and_options(client: Client, boss: Any) -> None:
    """server/tools.mdx, "Tool": description is a human-readable description of the
    functionality; ``descriptions`` overrides one."""
    client.force_login(boss)
    listed = tools(client, at=EXAMPLE)

    assert listed["search_books"]["description"] == (
        "List books, 10 per page. 'search' looks in: title, author name. Filter by: author."
    )
    assert "__" not in listed["search_books"]["description"]  # no ORM lookup reaches the model
    assert listed["book_get"]["description"] == "Get one book by its isbn."
    assert listed["book_update"]["description"] == (
        "Change a book, found by its isbn; only the given fields change."
    )
    assert listed["book_delete"]["description"] == "Remove a book from the catalogue for good."
    assert tools(client)["author_get"]["description"] == "Get one author by its id."


def test_annotations_say_which_actions_read_and_which_destroy(client: Client) -> None:
    """server/tools.mdx, "Tool annotations": readOnlyHint on reads;
    destructiveHint true on update and delete, false on create."""
    listed = tools(client)

    for name in ("volume_list", "volume_get"):
        assert listed[name]["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert listed["volume_create"]["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    for name in ("volume_update", "volume_delete"):
        assert listed[name]["annotations"]["destructiveHint"] is True
        assert listed[name]["annotations"]["readOnlyHint"] is False


def test_schemas_follow_fields_and_exclude(client: Client) -> None:
    """server/tools.mdx, "Tool": inputSchema is an object schema;
    outputSchema describes structuredContent. Excluded fields appear in neither; read-only
    fields (the id) are output only."""
    listed = tools(client)

    create = listed["volume_create"]["inputSchema"]
    assert set(create["properties"]) == {"isbn", "title", "author"}
    assert create["required"] == ["isbn", "title", "author"]
    assert create["additionalProperties"] is False
    output = listed["volume_get"]["outputSchema"]
    assert set(output["properties"]) == {"id", "isbn", "title", "author"}
    assert listed["volume_get"]["inputSchema"] == {
        "type": "object",
        "properties": {"id": {"type": "integer"}},
        "required": ["id"],
        "additionalProperties": False,
    }
    author = listed["author_get"]["outputSchema"]
    assert author["properties"] == {
        "id": {"type": "integer"},
        "name": {"type": "string", "maxLength": 200},
    }


def test_update_needs_only_the_lookup(client: Client) -> None:
    """server/tools.mdx, "Tool": update is partial, so only the lookup is required."""
    schema = tools(client)["volume_update"]["inputSchema"]

    assert schema["required"] == ["id"]
    assert list(schema["properties"]) == ["id", "isbn", "title", "author"]


def test_list_takes_search_filters_and_paging(client: Client, boss: Any) -> None:
    """server/tools.mdx, "Tool": only declared list_filter fields are filterable, and
    search exists only with search_fields."""
    client.force_login(boss)
    listed = tools(client, at=EXAMPLE)

    books = listed["search_books"]["inputSchema"]["properties"]
    assert list(books) == ["search", "author", "page", "page_size"]
    assert books["page_size"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}
    assert "search" not in tools(client)["volume_list"]["inputSchema"]["properties"]


def test_schemas_from_a_serializer_keep_its_nullability(client: Client, boss: Any) -> None:
    """server/tools.mdx, "Tool": any JSON Schema 2020-12 keyword may be
    used; a nullable field is a union with "null"."""
    client.force_login(boss)
    listed = tools(client, at=EXAMPLE)

    published = listed["book_create"]["inputSchema"]["properties"]["published"]
    assert published["type"] == ["string", "null"]
    assert listed["book_create"]["inputSchema"]["required"] == ["isbn", "title", "author"]


def test_every_schema_is_a_valid_2020_12_schema(client: Client, boss: Any) -> None:
    """server/tools.mdx, "Tool": inputSchema and outputSchema are JSON
    Schema 2020-12; inputSchema's root is an object."""
    client.force_login(boss)
    for listed in (tools(client), tools(client, at=EXAMPLE)):
        for tool in listed.values():
            assert tool["inputSchema"]["type"] == "object"
            Draft202012Validator.check_schema(tool["inputSchema"])
            Draft202012Validator.check_schema(tool["outputSchema"])


# -- registration --------------------------------------------------------------------------


def test_unknown_actions_are_refused() -> None:
    """server/tools.mdx: only the five model actions exist."""

    class Bad(django_mcp.ModelTools):
        actions = ["list", "publish"]

    with pytest.raises(InvalidDeclaration):
        MCPSite(name="bad").register(Author, Bad)


def test_a_model_registers_once_and_clashing_names_add_nothing() -> None:
    """server/tools.mdx, "Tool Names": names SHOULD be unique per server."""
    other = MCPSite(name="twice")
    other.register(Author)
    with pytest.raises(AlreadyRegistered):
        other.register(Author)

    class Clash(django_mcp.ModelTools):
        tool_names = {"list": "author_list"}

    with pytest.raises(AlreadyRegistered):
        other.register(Book, Clash)
    assert not other.is_registered(Book)
    assert {t.name for t in other.get_tools()} == {"author_list", "author_get"}


def test_two_actions_cannot_share_a_tool_name() -> None:
    """server/tools.mdx, "Tool Names": names SHOULD be unique per server; renaming get to
    book_list would silently replace the list tool."""

    class Shadowing(django_mcp.ModelTools):
        tool_names = {"get": "book_list"}

    other = MCPSite(name="shadowing")
    with pytest.raises(InvalidDeclaration):
        other.register(Book, Shadowing)
    assert other.get_tools() == []


def test_unregistering_a_model_removes_its_tools() -> None:
    """server/tools.mdx, "Listing Tools": the list is what is currently available."""
    other = MCPSite(name="unregister")
    other.register([Author, Book])
    other.unregister(Book)

    assert {t.name for t in other.get_tools()} == {"author_list", "author_get"}
    with pytest.raises(NotRegistered):
        other.unregister(Book)


# -- registration is all or nothing; every action is a complete tool ---------------------


def test_a_failed_model_registration_adds_nothing_and_the_fixed_class_registers():
    fresh = MCPSite(name="atomic-registration")

    class BrokenTools(django_mcp.ModelTools):
        resource_uri = "authors://{name}"  # not the lookup argument: refused

    with pytest.raises(InvalidDeclaration, match="resource_uri"):
        fresh.register(Author, BrokenTools)
    assert not fresh.is_registered(Author)
    assert fresh.get_tools() == []
    assert fresh.get_resource_templates() == []

    class FixedTools(django_mcp.ModelTools):
        resource_uri = "authors://{id}"

    fresh.register(Author, FixedTools)
    assert fresh.is_registered(Author)
    assert [spec.uri for spec in fresh.get_resource_templates()] == ["authors://{id}"]
    fresh.unregister(Author)


def test_every_model_action_is_a_complete_tool_spec():
    """Like any tool, an action has a signature, an arguments model and header params."""
    specs = {spec.name: spec for spec in site.get_tools()}
    create = specs["volume_create"]
    assert create.signature.input_schema == create.input_schema == create.definition["inputSchema"]
    assert create.arguments_model.model_validate({"title": "Dune"})
    assert create.header_params == {}
    assert create.registrant.endswith("VolumeTools.create_action")
