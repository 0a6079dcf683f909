"""What a ``ModelTools`` serializer reads and returns: the serializer context on every
action, and output schemas that hold for fields DRF's schema generator only guesses.

server/tools.mdx, "Output Schema": when a tool declares an ``outputSchema``, its structured
results MUST conform to it, and clients SHOULD validate them (the official SDK refuses a
result that does not). DRF's generator calls any field it does not know a string and a
``JSONField`` an object, so a method field returning a bool broke every list it was in.
The module is its own URLconf: a site at /mcp with one ModelTools over ``Book``.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest
from django.db import models as django_models
from django.urls import path
from jsonschema import Draft202012Validator
from rest_framework import serializers

import django_mcp
from django_mcp.modeltools.schemas import field_schema, output_schema
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book
from tests.helpers import call_tool, mcp_post, result_of

if TYPE_CHECKING:
    from django.test import Client

site = MCPSite(name="modeltools-serializer-fields")


class Shelf(serializers.Field[Any, Any, Any, Any]):
    """A project's own field, built directly on ``Field``: it may return anything."""

    def to_representation(self, value: Any) -> Any:
        return [value[:1], len(value)]


class AuthorSerializer(serializers.ModelSerializer[Author]):
    """Nested in a book: its guessed fields must be replaced too."""

    prolific = serializers.SerializerMethodField()
    notes = serializers.JSONField(read_only=True, default=list, help_text="Free notes.")
    books = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta:
        model = Author
        fields = ["id", "name", "prolific", "notes", "books"]

    def get_prolific(self, author: Author) -> bool:
        return author.books.count() > 1


class BookSerializer(serializers.ModelSerializer[Book]):
    """Fields whose value DRF's schema generator can only guess."""

    seen_by = serializers.SerializerMethodField()  # no annotation: any value
    cheap = serializers.SerializerMethodField()  # annotated: a boolean
    author_name = serializers.ReadOnlyField(source="author.name")
    tags = serializers.JSONField(read_only=True, default=list)
    shelf = Shelf(source="title", read_only=True)
    writer = AuthorSerializer(source="author", read_only=True)
    author_id = serializers.PrimaryKeyRelatedField(source="author", read_only=True)
    maybe_author = serializers.PrimaryKeyRelatedField(
        source="author", read_only=True, allow_null=True
    )

    class Meta:
        model = Book
        fields = [
            "isbn", "title", "seen_by", "cheap", "author_name", "tags", "shelf", "writer",
            "author_id", "maybe_author",
        ]  # fmt: skip

    def get_seen_by(self, book: Book) -> Any:
        """Who the serializer was given as the caller: needs the context on reads too."""
        request = self.context.get("request")
        mcp_context = self.context.get("mcp_context")
        return {
            "request_user": getattr(getattr(request, "user", None), "username", None),
            "has_context": mcp_context is not None,
        }

    def get_cheap(self, book: Book) -> bool:
        return book.price < 8


@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    serializer_class = BookSerializer
    actions = ["list", "get"]
    lookup_argument = "isbn"


urlpatterns = [path("mcp", site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


def listed_output_schema(client: Client, name: str) -> dict[str, Any]:
    listed = result_of(mcp_post(client, "tools/list"))["tools"]
    schema: dict[str, Any] = next(t for t in listed if t["name"] == name)["outputSchema"]
    return schema


def test_guessed_fields_get_schemas_their_values_meet() -> None:
    properties = output_schema(BookSerializer())["properties"]

    assert properties["cheap"] == {"type": "boolean"}
    assert properties["seen_by"] == {}
    assert properties["author_name"] == {}
    assert properties["tags"] == {}
    assert properties["shelf"] == {}
    assert properties["author_id"] == {"type": "integer"}  # DRF: a string (no queryset)
    nested = properties["writer"]["properties"]
    assert nested["prolific"] == {"type": "boolean"}
    assert nested["notes"] == {"description": "Free notes."}  # any value, help text kept
    assert nested["books"] == {"type": "array", "items": {"type": "integer"}}
    assert properties["maybe_author"] == {"type": ["integer", "null"]}
    assert properties["title"]["type"] == "string"  # what DRF knows stays DRF's


def test_list_and_get_results_conform_to_their_output_schemas(
    client: Client, catalogue: Any
) -> None:
    page = result_of(call_tool(client, "book_list", {}))["structuredContent"]
    one = result_of(call_tool(client, "book_get", {"isbn": "9780441013593"}))

    Draft202012Validator(listed_output_schema(client, "book_list")).validate(page)
    Draft202012Validator(listed_output_schema(client, "book_get")).validate(
        one["structuredContent"]
    )
    assert one["structuredContent"]["cheap"] is False
    assert one["structuredContent"]["writer"]["prolific"] is True
    assert one["structuredContent"]["author_name"] == "Frank Herbert"


def test_reads_give_the_serializer_the_request_and_the_mcp_context(
    client: Client, catalogue: Any, django_user_model: Any
) -> None:
    """As DRF's generic views do for every action: ``self.context["request"]`` in a
    method field must not depend on whether the action writes."""
    client.force_login(django_user_model.objects.create(username="ada"))
    expected = {"request_user": "ada", "has_context": True}

    page = result_of(call_tool(client, "book_list", {}))["structuredContent"]
    one = result_of(call_tool(client, "book_get", {"isbn": "9780441013593"}))

    assert page["results"]
    assert all(row["seen_by"] == expected for row in page["results"])
    assert one["structuredContent"]["seen_by"] == expected


# -- the rest of DRF's guesses, field by field ---------------------------------------------


class Flag(serializers.BooleanField):
    """A project's boolean: DRF maps booleans by exact class, so it said "string"."""


class Bag(serializers.DictField):
    """Likewise for a dict."""


class Secretive(serializers.Serializer[Any]):
    """Nested, with a field that is only ever written."""

    name = serializers.CharField()
    secret = serializers.CharField(write_only=True)


class Odd(serializers.Serializer[Any]):
    by_slug = serializers.SlugRelatedField(slug_field="id", read_only=True)
    modelled = serializers.ModelField(model_field=django_models.IntegerField(), read_only=True)
    flag = Flag(read_only=True)
    bag = Bag(read_only=True)
    colour = serializers.ChoiceField(choices=["r", "g"], allow_null=True, read_only=True)
    inner = Secretive(read_only=True)


@pytest.mark.parametrize(
    ("name", "schema"),
    [
        ("by_slug", {}),  # the slug may be anything, a number here
        ("modelled", {}),
        ("flag", {"type": "boolean"}),
        ("bag", {"type": "object"}),
        ("colour", {"enum": ["r", "g", None], "type": ["string", "null"]}),
    ],
)
def test_fields_drf_maps_by_guess(name: str, schema: dict[str, Any]) -> None:
    assert output_schema(Odd())["properties"][name] == schema


def test_a_nested_serializer_leaves_out_what_does_not_travel_that_way() -> None:
    """A write-only field of a nested serializer is not in the output, nor required."""
    inner = output_schema(Odd())["properties"]["inner"]
    assert set(inner["properties"]) == {"name"}
    assert inner.get("required", []) == ["name"]


def test_values_of_the_guessed_fields_meet_their_schemas() -> None:
    value = {
        "by_slug": 9, "modelled": 4, "flag": True, "bag": {"a": 1}, "colour": None,
        "inner": {"name": "n"},
    }  # fmt: skip
    Draft202012Validator(output_schema(Odd())).validate(value)


def test_a_relation_to_a_key_that_is_itself_a_relation_is_an_integer() -> None:
    """A multi-table child's key is the one-to-one link to its parent: followed to the
    parent's integer key."""
    link = SimpleNamespace(remote_field=object(), target_field=django_models.AutoField())
    child = SimpleNamespace(_meta=SimpleNamespace(pk=link))
    field = serializers.PrimaryKeyRelatedField(queryset=SimpleNamespace(model=child))
    assert field_schema(field) == {"type": "integer"}
