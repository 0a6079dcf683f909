"""ModelTools under querysets and arguments a hostile client or a real project brings:
``get_queryset`` scoped through a many-valued relation (``distinct()``, an annotation, a
plain join), filters with values of the wrong type or past the column's range, search
across a reverse relation, paging through ties, rows as resources and their serializer
context, Django's regex validators in the schemas.

Tool execution errors are results with ``isError: true``, never a protocol error
(server/tools.mdx, "Error Handling"); a -32603 here is a crash. The module is its own
URLconf: small sites, each registering one ``ModelTools`` as a Django user would, served
through the real HTTP stack.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

import json
import re
import shutil
import subprocess
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.validators import RegexValidator
from django.db import connection
from django.db.models import Count, QuerySet
from django.test import Client
from django.urls import path
from jsonschema import Draft202012Validator
from rest_framework import serializers

import django_mcp
from django_mcp import Context
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book
from tests.helpers import call_tool, mcp_post, result_of

# -- sites ----------------------------------------------------------------------------------

filters = MCPSite(name="hostile-qs-filters")


@django_mcp.register(Book, site=filters)
class FilteredBookTools(django_mcp.ModelTools):
    fields = ["id", "isbn", "title", "author", "price", "published"]
    list_filter = ["published", "price", "author"]


searching = MCPSite(name="hostile-qs-search")


@django_mcp.register(Author, site=searching)
class AuthorByTitleTools(django_mcp.ModelTools):
    """Authors found by the titles of their books (a reverse, many-valued relation)."""

    fields = ["id", "name"]
    search_fields = ["name", "books__title"]


scoped = MCPSite(name="hostile-qs-scoped")


@django_mcp.register(Author, site=scoped)
class PublishedAuthorTools(django_mcp.ModelTools):
    """Only authors with a published book; ``.distinct()`` because the join repeats them."""

    fields = ["id", "name"]
    actions = ["list", "get", "update", "delete"]

    def get_queryset(self, ctx: Context) -> QuerySet[Any]:
        return super().get_queryset(ctx).filter(books__published__isnull=False).distinct()


undistinct = MCPSite(name="hostile-qs-undistinct")


@django_mcp.register(Author, site=undistinct)
class PublishedAuthorNoDistinctTools(django_mcp.ModelTools):
    fields = ["id", "name"]

    def get_queryset(self, ctx: Context) -> QuerySet[Any]:
        return super().get_queryset(ctx).filter(books__published__isnull=False)


annotated = MCPSite(name="hostile-qs-annotated")


@django_mcp.register(Author, site=annotated)
class AnnotatedAuthorTools(django_mcp.ModelTools):
    fields = ["id", "name"]
    actions = ["get", "update"]

    def get_queryset(self, ctx: Context) -> QuerySet[Any]:
        return super().get_queryset(ctx).annotate(book_count=Count("books"))


class ContextBookSerializer(serializers.ModelSerializer[Book]):
    """Reads the context every action gives it (docs/guides/modeltools.md, "The options")."""

    caller = serializers.SerializerMethodField()

    class Meta:
        model = Book
        fields = ["id", "isbn", "title", "caller"]

    def get_caller(self, book: Book) -> str:
        user = self.context["mcp_context"].user
        return "anonymous" if user is None or user.is_anonymous else user.get_username()


resources = MCPSite(name="hostile-qs-resources")


@django_mcp.register(Book, site=resources)
class ResourceBookTools(django_mcp.ModelTools):
    serializer_class = ContextBookSerializer
    lookup_field = "isbn"
    resource_uri = "rbooks://{isbn}"


paging = MCPSite(name="hostile-qs-paging")


@django_mcp.register(Book, site=paging)
class PagedBookTools(django_mcp.ModelTools):
    """No ``ordering``: the model's ``Meta.ordering`` (``["title"]``) is used, as documented."""

    fields = ["id", "title"]
    list_max_page_size = 100


listonly = MCPSite(name="hostile-qs-listonly")


@django_mcp.register(Book, site=listonly)
class ListOnlyBookTools(django_mcp.ModelTools):
    """Only a list, and only for those who may view books; rows also as resources."""

    fields = ["id", "isbn", "title", "price"]
    actions = ["list"]
    permission_required = {"list": "books.view_book"}
    resource_uri = "lobooks://{id}"


users = MCPSite(name="hostile-qs-users")


@django_mcp.register(User, site=users)
class UserTools(django_mcp.ModelTools):
    """A staff directory: usernames (Django's UnicodeUsernameValidator) and groups."""

    fields = ["id", "username", "groups"]
    actions = ["list", "get", "create"]


urlpatterns = [
    path("listonly/mcp", listonly.urls),
    path("users/mcp", users.urls),
    path("filters/mcp", filters.urls),
    path("search/mcp", searching.urls),
    path("scoped/mcp", scoped.urls),
    path("undistinct/mcp", undistinct.urls),
    path("annotated/mcp", annotated.urls),
    path("resources/mcp", resources.urls),
    path("paging/mcp", paging.urls),
]

pytestmark = pytest.mark.urls(__name__)

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite only")


def call(client: Client, name: str, arguments: dict[str, Any], *, at: str) -> dict[str, Any]:
    return result_of(call_tool(client, name, arguments, path=at))


def tool_error(result: dict[str, Any]) -> str:
    assert result.get("isError") is True, result
    text: str = result["content"][0]["text"]
    return text


# -- hostile filter values crash as -32603 -----------------------------------------------


@pytest.mark.parametrize("value", [5, 20240101, 1.5])
def test_a_non_string_date_filter_is_a_tool_error(client: Client, catalogue: Any, value: Any):
    """server/tools.mdx "Error Handling": bad arguments are tool execution errors. The
    schema says string, but a number reaches ``DateField.to_python``, whose
    ``date.fromisoformat(5)`` raises TypeError -- not ValidationError -- and the call is
    answered -32603 Internal error."""
    result = call(client, "book_list", {"published": value}, at="/filters/mcp")

    assert tool_error(result).startswith("published:")


@sqlite_only
def test_a_foreign_key_filter_beyond_64_bits_is_a_tool_error(client: Client, catalogue: Any):
    """``author=10**30``: an exact lookup on a plain integer handles overflow (the lookup
    finds nothing), but a foreign key's does not: sqlite3 raises OverflowError -> -32603."""
    result = call(client, "book_list", {"author": 10**30}, at="/filters/mcp")

    assert result.get("isError") is True or result["structuredContent"]["count"] == 0


@postgres_only
def test_a_decimal_filter_beyond_numeric_range_is_a_tool_error(client: Client, catalogue: Any):
    """``price="1e999999"`` is a finite Decimal that ``to_python`` accepts; PostgreSQL
    refuses it (DataError: value overflows numeric format) -> -32603."""
    result = call(client, "book_list", {"price": "1e999999"}, at="/filters/mcp")

    assert result.get("isError") is True or result["structuredContent"]["count"] == 0


# -- search across a many-valued relation repeats rows -----------------------------------


def test_search_across_a_reverse_relation_lists_each_row_once(client: Client, catalogue: Any):
    """Le Guin has two books whose titles contain "the"; she is listed twice and
    counted twice. The admin (``lookup_spawns_duplicates``) and DRF's SearchFilter
    add ``distinct()`` for such search fields."""
    page = call(client, "author_list", {"search": "the"}, at="/search/mcp")["structuredContent"]

    names = [row["name"] for row in page["results"]]
    assert names == ["Ursula K. Le Guin"]
    assert page["count"] == 1


# -- scoping get_queryset by a relation: get crashes, and the fix breaks writes on PG ----


def test_list_shows_what_the_queryset_returns_and_distinct_lists_each_row_once(
    client: Client, catalogue: Any
) -> None:
    """docs/guides/modeltools.md, ``get_queryset``: a join through a many-valued relation
    repeats a row per match, as in the admin; ``.distinct()`` lists and counts each once."""
    joined = call(client, "author_list", {}, at="/undistinct/mcp")["structuredContent"]
    distinct = call(client, "author_list", {}, at="/scoped/mcp")["structuredContent"]

    assert joined["count"] > 2  # the docs' warning holds
    assert sorted(row["name"] for row in distinct["results"]) == [
        "Frank Herbert",
        "Ursula K. Le Guin",
    ]
    assert distinct["count"] == 2


def test_get_within_a_joined_get_queryset_finds_the_row(client: Client, catalogue: Any):
    """A get_queryset scoped through a reverse relation repeats the author once per
    published book: ``queryset.get()`` raises MultipleObjectsReturned, which get_object
    does not catch -> -32603."""
    herbert = catalogue["herbert"]
    result = call(client, "author_get", {"id": herbert.pk}, at="/undistinct/mcp")

    assert result.get("isError") is not True, result
    assert result["structuredContent"]["name"] == "Frank Herbert"


@postgres_only
@pytest.mark.parametrize("action", ["update", "delete"])
def test_writes_within_a_distinct_get_queryset_work(
    client: Client, catalogue: Any, action: str
) -> None:
    """The same scoping with ``.distinct()`` (the usual fix) lists and gets fine, but on
    PostgreSQL update and delete run ``SELECT DISTINCT ... FOR UPDATE OF``, which
    PostgreSQL refuses (NotSupportedError) -> -32603. SQLite ignores FOR UPDATE, so the
    same code passes there."""
    herbert = catalogue["herbert"]
    assert (
        call(client, "author_get", {"id": herbert.pk}, at="/scoped/mcp").get("isError") is not True
    )
    arguments: dict[str, Any] = {"id": herbert.pk}
    if action == "update":
        arguments["name"] = "F. Herbert"
    result = call(client, f"author_{action}", arguments, at="/scoped/mcp")

    assert result.get("isError") is not True or "Cannot delete" in tool_error(result), result


@postgres_only
def test_update_within_an_annotated_get_queryset_works(client: Client, catalogue: Any):
    """``annotate(Count(...))`` in get_queryset: ``FOR UPDATE is not allowed with GROUP BY
    clause`` on PostgreSQL -> -32603."""
    herbert = catalogue["herbert"]
    result = call(client, "author_update", {"id": herbert.pk, "name": "F"}, at="/annotated/mcp")

    assert result.get("isError") is not True, result


# -- resources/read gives the serializer no context ---------------------------------------


def test_the_instance_resource_gives_the_serializer_its_context(client: Client, catalogue: Any):
    """The guide: every action gives the serializer ``request`` and ``mcp_context``. The
    tool does; ``resources/read`` of the same row (registration.py read_instance)
    instantiates the serializer with no context at all: KeyError -> -32603."""
    tool = call(client, "book_get", {"isbn": "9780441013593"}, at="/resources/mcp")
    assert tool["structuredContent"]["caller"] == "anonymous"

    response = mcp_post(
        client, "resources/read", {"uri": "rbooks://9780441013593"}, path="/resources/mcp"
    )
    body = response.json()
    assert "result" in body, body
    assert json.loads(body["result"]["contents"][0]["text"])["caller"] == "anonymous"


# -- paging over a non-unique ordering skips and repeats rows -----------------------------


@postgres_only
def test_paging_through_the_list_returns_every_row_once(client: Client, catalogue: Any):
    """The default ordering is the model's ``Meta.ordering`` (``["title"]``), not unique.
    OFFSET paging over it is not deterministic: PostgreSQL's top-N sort returns ties in
    an order that depends on LIMIT, so pages overlap and rows are never seen. The admin's
    ChangeList appends ``-pk`` to make the ordering total; ModelTools does not."""
    author = catalogue["herbert"]
    Book.objects.bulk_create(
        Book(isbn=f"{n:013d}", title="Same title", author=author, price=Decimal(1))
        for n in range(600)
    )
    expected = set(Book.objects.values_list("id", flat=True))
    seen: list[int] = []
    page = 1
    while True:
        data = call(client, "book_list", {"page": page, "page_size": 7}, at="/paging/mcp")[
            "structuredContent"
        ]
        seen.extend(row["id"] for row in data["results"])
        if not data["hasMore"]:
            break
        page += 1

    assert len(seen) == len(set(seen)), f"{len(seen) - len(set(seen))} rows listed twice"
    assert set(seen) == expected


# -- a resource serves rows the only action's permission withholds ------------------------


def test_rows_as_resources_ask_what_the_list_asks_when_there_is_no_get(
    client: Client, catalogue: Any
) -> None:
    """The guide: "Reading a row asks what the get action asks". With no get action the
    resource asks ``permissions_for("get")``, which is nothing: anyone reads every row
    through resources/read while book_list needs books.view_book."""
    listed = result_of(mcp_post(client, "tools/list", path="/listonly/mcp"))["tools"]
    assert listed == []  # the anonymous caller may not list books

    book = catalogue["books"][0]
    response = mcp_post(
        client, "resources/read", {"uri": f"lobooks://{book.pk}"}, path="/listonly/mcp"
    )

    assert "error" in response.json(), response.json()


# -- input/output schemas carry Python regexes as JSON Schema patterns -------------------


def test_schemas_with_a_regex_validator_are_valid_2020_12(client: Client, boss: Any) -> None:
    """JSON Schema ``pattern`` is an ECMA-262 regex. DRF copies Django's validator regex
    and rewrites ``\\Z`` as ``\\z``: ``^[\\w.@+-]+\\z``. ECMA-262 has no ``\\z``: with
    the ``u`` flag (Ajv's default, the TypeScript SDK's validator) it is a SyntaxError;
    without it, it is a literal "z", so "alice" fails and "alicez" passes. And its ``\\w``
    is ASCII where Python's takes "José": that pattern is left out, the server checks."""
    client.force_login(boss)
    listed = result_of(mcp_post(client, "tools/list", path="/users/mcp"))["tools"]
    create = next(tool for tool in listed if tool["name"] == "user_create")
    assert "pattern" not in create["inputSchema"]["properties"]["username"]
    patterns = [
        prop["pattern"]
        for tool in listed
        for schema in (tool["inputSchema"], tool["outputSchema"])
        for prop in schema.get("properties", {}).values()
        if "pattern" in prop
    ]
    assert [p for p in patterns if "\\z" in p or "\\Z" in p] == []
    for tool in listed:
        Draft202012Validator.check_schema(tool["inputSchema"])
        Draft202012Validator.check_schema(tool["outputSchema"])
    refused = call(client, "user_create", {"username": "no spaces"}, at="/users/mcp")
    assert tool_error(refused).startswith("Invalid user: username:")


@pytest.mark.parametrize(
    ("python", "ecma"),
    [
        (r"^[-a-zA-Z0-9_]+\Z", r"^[-a-zA-Z0-9_]+$"),  # Django's slug validator
        (r"\A[0-9]+\z", r"^[0-9]+$"),
        (r"(?P<year>[0-9]{4})\z", r"(?<year>[0-9]{4})$"),
        (r"^a\\\z", r"^a\\$"),  # an escaped backslash, then the anchor
        (r"^a\\z", r"^a\\z"),  # a backslash, then the letter z: kept as it is
        (r"^[0-9]{13}$", r"^[0-9]{13}$"),
        (r"^[\w.@+-]+\z", None),  # \w is Unicode in Python, ASCII in ECMA-262
        (r"(?i)^abc$", None),  # an inline flag: no ECMA-262 form
        (r"(?P=name)", None),
        (r"^ISO\-9[0-9]+\Z", None),  # re.escape's \-: an error under ECMA-262's u flag
        (r"^(?>ab)\Z", None),  # atomic group
        (r"^a*+\Z", None),  # possessive
        (r"^a(?#note)b\Z", None),
        (r"(a)?(?(1)b|c)\Z", None),
        (r"^\U0001F600\Z", None),
        (r"^a{,3}\Z", None),  # Python: up to 3; ECMA-262: an error
        (r"^a{2,3}\.b\Z", r"^a{2,3}\.b$"),
        (r"^[a-z\-]+(?:-[0-9]{2})?\Z", None),  # \- even in a class: left out
        (r"^\x41\u00e9[^/]+$", r"^\x41\u00e9[^/]+$"),
    ],
)
def test_a_python_pattern_becomes_its_ecma_262_form_or_none(python: str, ecma: str | None) -> None:
    from django_mcp.modeltools.patterns import ecma_pattern

    assert ecma_pattern(python) == ecma


KEPT_OR_NOT = [
    r"^[-a-zA-Z0-9_]+\Z",
    r"^" + re.escape("ISO-9") + r"[0-9]+\Z",
    r"^" + re.escape("a#b") + r"\Z",
    r"^(?>ab)\Z",
    r"^a*+\Z",
    r"^a(?#comment)b\Z",
    r"(a)?(?(1)b|c)\Z",
    r"^\U0001F600\Z",
    r"^a{,3}\Z",
    r"^a{2,3}\.b\Z",
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{2})\Z",
]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js for ECMA-262")
def test_every_pattern_kept_compiles_under_ecma_262s_u_flag() -> None:
    """JSON Schema 2020-12 ``pattern`` is ECMA-262; Ajv (the TypeScript SDK's validator)
    compiles with the ``u`` flag. Every pattern kept must compile there."""
    from django_mcp.modeltools.patterns import ecma_pattern

    kept = [ecma for ecma in map(ecma_pattern, KEPT_OR_NOT) if ecma is not None]
    assert len(kept) >= 3
    script = (
        "const failed = JSON.parse(process.argv[1]).filter(p => {"
        " try { new RegExp(p, 'u'); return false; } catch (e) { return true; } });"
        " console.log(JSON.stringify(failed));"
    )
    run = subprocess.run(
        ["node", "-e", script, json.dumps(kept)], capture_output=True, text=True, check=True
    )
    assert json.loads(run.stdout) == []


class FlaggedSerializer(serializers.Serializer):  # type: ignore[type-arg]
    code = serializers.CharField(validators=[RegexValidator(r"^[a-z]+\Z", flags=re.IGNORECASE)])
    title = serializers.CharField(
        validators=[RegexValidator(r"^draft", inverse_match=True, message="no drafts")]
    )


def test_a_validator_with_flags_or_inverse_match_publishes_no_pattern() -> None:
    """DRF copies a RegexValidator's regex but neither its flags nor ``inverse_match``:
    the schema refused "ABC", which the IGNORECASE validator takes, and required the
    drafts the inverse validator refuses. Such a field gets no pattern."""
    from django_mcp.modeltools.schemas import input_schema

    value = {"code": "ABC", "title": "Final"}
    assert FlaggedSerializer(data=value).is_valid()
    schema = input_schema(FlaggedSerializer())
    assert list(Draft202012Validator(schema).iter_errors(value)) == []
    assert "pattern" not in schema["properties"]["code"]
    assert "pattern" not in schema["properties"]["title"]


# -- page as a JSON Schema integer --------------------------------------------------------


def test_a_page_number_written_as_2_0_is_an_integer(client: Client, catalogue: Any) -> None:
    """The schema says ``"type": "integer"``; in JSON Schema 2.0 is an integer (the lookup
    accepts 1.0 for that reason), but ``page`` and ``page_size`` refuse it."""
    result = call(client, "book_list", {"page": 1.0, "page_size": 2.0}, at="/paging/mcp")

    assert result.get("isError") is not True, result
