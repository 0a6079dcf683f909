"""completion/complete through HTTP, for prompt arguments and resource-template variables.

The test docstrings paraphrase server/utilities/completion.mdx rather than quote it. This
module is its own URLconf: the example site of docs/examples/completion_example.py is served
at /example/mcp and a fresh site with the edge cases at /mcp.
"""

from __future__ import annotations

import enum
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import path

from django_mcp.protocol import errors
from django_mcp.sites import MCPSite
from docs.examples import completion_example
from testproject.books.models import Author, Book
from tests.helpers import assert_error, mcp_post, result_of

if TYPE_CHECKING:
    from django.test import Client

EXAMPLE = "/example/mcp"

site = MCPSite(name="test-completion")
seen: list[dict[str, Any]] = []


class Shelf(enum.Enum):
    FICTION = "fiction"
    FANTASY = "fantasy"
    HISTORY = "history"


def many(value: str) -> list[str]:
    """150 candidates."""
    return [f"{value}{n:03}" for n in range(150)]


def exactly_100(value: str) -> range:
    """100 candidates, as ints: the server sends strings."""
    return range(100)


def recorder(value: str, arguments: dict[str, str], argument: str, ctx: Any) -> list[str]:
    """Records what it was given."""
    seen.append(
        {"value": value, "arguments": arguments, "argument": argument, "method": ctx.method}
    )
    return [value.upper()]


@site.prompt(complete={"a": many, "b": exactly_100, "c": recorder})
def everything(a: str, b: str, c: str, shelf: Shelf = Shelf.FICTION, free: str = "") -> str:
    """A prompt with a completer per argument, an Enum and a free-text argument."""
    return a


urlpatterns = [path("mcp", site.urls), path("example/mcp", completion_example.site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.usefixtures("no_request_log")]


@pytest.fixture
def books(db: None) -> None:
    herbert = Author.objects.create(name="Frank Herbert")
    heinlein = Author.objects.create(name="Robert Heinlein")
    Author.objects.create(name="Hilary Mantel")
    for isbn, title, author in [
        ("1", "Dune", herbert),
        ("2", "Dune Messiah", herbert),
        ("3", "Double Star", heinlein),
        ("4", "Children of Dune", herbert),
    ]:
        Book.objects.create(isbn=isbn, title=title, author=author, price=Decimal(1))


def complete(
    client: Client,
    ref: dict[str, Any],
    name: str,
    value: str,
    earlier: dict[str, Any] | None = None,
    *,
    at: str = "/mcp",
) -> Any:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if earlier is not None:
        params["context"] = {"arguments": earlier}
    return mcp_post(client, "completion/complete", params, path=at)


def prompt(name: str) -> dict[str, str]:
    return {"type": "ref/prompt", "name": name}


def template(uri: str) -> dict[str, str]:
    return {"type": "ref/resource", "uri": uri}


def values(response: Any) -> dict[str, Any]:
    completion: dict[str, Any] = result_of(response)["completion"]
    return completion


# -- the capability ------------------------------------------------------------------------------


def test_the_completions_capability_is_advertised_when_something_completes(client: Client) -> None:
    """server/utilities/completion.mdx: completion/complete requires the
    server capability completions: {}."""
    capabilities = result_of(mcp_post(client, "server/discover", path=EXAMPLE))["capabilities"]

    assert capabilities["completions"] == {}


def test_without_anything_to_complete_the_method_does_not_exist(
    client: Client, mcp_site: MCPSite
) -> None:
    """server/utilities/completion.mdx: -32601 if unsupported (its label "Capability not
    supported" is still Method not found), which on HTTP is 404
    (basic/transports/streamable-http.mdx); a prompt whose arguments are free text offers
    nothing to complete."""

    @mcp_site.prompt
    def free(text: str) -> str:
        return text

    assert "completions" not in result_of(mcp_post(client, "server/discover"))["capabilities"]
    response = complete(client, prompt("free"), "text", "a")
    assert_error(response, 404, errors.METHOD_NOT_FOUND)


def test_a_literal_argument_alone_advertises_completions(client: Client, mcp_site: MCPSite) -> None:
    """server/utilities/completion.mdx: the capability is declared when the
    server can complete something; choices of a Literal can be."""

    @mcp_site.prompt
    def pick(size: Literal["small", "medium", "large"]) -> str:
        return size

    assert "completions" in result_of(mcp_post(client, "server/discover"))["capabilities"]
    assert values(complete(client, prompt("pick"), "size", "m"))["values"] == ["medium"]


# -- prompt arguments ----------------------------------------------------------------------------


def test_an_async_completer_completes_a_prompt_argument(client: Client) -> None:
    """server/utilities/completion.mdx: ref/prompt names the prompt;
    argument gives the name and the value typed so far."""
    completion = values(complete(client, prompt("translate"), "language", "fr", at=EXAMPLE))

    assert completion == {"values": ["French"], "total": 1, "hasMore": False}


def test_literal_and_enum_choices_complete_by_prefix(client: Client) -> None:
    """server/utilities/completion.mdx: values match what was typed."""
    tones = values(complete(client, prompt("translate"), "tone", "", at=EXAMPLE))
    shelves = values(complete(client, prompt("everything"), "shelf", "f"))

    assert tones["values"] == ["formal", "casual"]
    assert shelves["values"] == ["fiction", "fantasy"]


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Switch(enum.Enum):
    ON = True


@pytest.mark.parametrize(
    "annotation", [Literal[1, 2], Literal[True, False], Literal["a", 3], Switch]
)
def test_a_prompt_argument_whose_choices_it_would_refuse_is_refused_when_declared(
    annotation: Any,
) -> None:
    """server/utilities/completion.mdx and server/prompts.mdx: prompt arguments are strings
    on the wire, and completion offers a choice as its string; Literal[1, 2] would offer
    "1", which prompts/get refuses, so the prompt could never be called. It is refused at
    declaration (docs/guides/prompts.md)."""
    from django_mcp.exceptions import InvalidDeclaration

    def pick(n: Any) -> str:
        return str(n)

    pick.__annotations__["n"] = annotation
    with pytest.raises(InvalidDeclaration, match="prompt arguments and URI variables are strings"):
        MCPSite(name="test-choices").prompt(pick)


def test_a_template_variable_whose_choices_it_would_refuse_is_refused_when_declared() -> None:
    """server/resources.mdx: URI template variables are strings too, and completion offers
    ``Literal[1, 2]`` as "1", which resources/read would then refuse: the template could
    never be read at the URIs completion builds. Refused at declaration, as for prompts."""
    from django_mcp.exceptions import InvalidDeclaration

    def shelf(number: Literal[1, 2]) -> str:
        return str(number)

    with pytest.raises(InvalidDeclaration, match="'number' offers '1'"):
        MCPSite(name="test-choices").resource("shelves://{number}")(shelf)


def test_every_completed_choice_is_accepted_by_prompts_get(
    client: Client, mcp_site: MCPSite
) -> None:
    """server/utilities/completion.mdx: the values completion suggests are ones the prompt
    takes; an Enum of int values converts from the string it offers."""

    @mcp_site.prompt
    def rate(level: Level, tone: Literal["formal", "casual"] = "formal") -> str:
        return f"{level.name} {tone}"

    level = values(complete(client, prompt("rate"), "level", ""))["values"]
    tone = values(complete(client, prompt("rate"), "tone", ""))["values"]
    response = mcp_post(
        client, "prompts/get", {"name": "rate", "arguments": {"level": level[-1], "tone": tone[-1]}}
    )

    assert (level, tone) == (["1", "2"], ["formal", "casual"])
    assert result_of(response)["messages"][0]["content"]["text"] == "HIGH casual"


def test_a_database_completer(client: Client, books: None) -> None:
    """server/utilities/completion.mdx: values SHOULD be sorted by relevance
    (here: alphabetically among matches)."""
    completion = values(complete(client, prompt("translate"), "title", "du", at=EXAMPLE))

    assert completion["values"] == ["Dune", "Dune Messiah"]


@pytest.fixture
def many_authors(db: None) -> None:
    Author.objects.bulk_create(Author(name=f"Writer {n:03}") for n in range(150))


def test_a_queryset_completer_fetches_101_rows_and_counts_the_rest(
    client: Client, many_authors: None
) -> None:
    """server/utilities/completion.mdx: values has at most 100 items, total may exceed
    what is sent and hasMore says more exist. A completer that returns its QuerySet (the
    example's author_names) is not loaded whole to send 100: one query fetches 101 rows,
    one COUNT gives the total."""
    ref = template("books://by/{author}/{title}")
    with CaptureQueriesContext(connection) as queries:
        completion = values(complete(client, ref, "author", "wri", at=EXAMPLE))

    assert completion["values"] == [f"Writer {n:03}" for n in range(100)]
    assert (completion["total"], completion["hasMore"]) == (150, True)
    sql = [
        query["sql"].upper()
        for query in queries.captured_queries
        if "AUTHOR" in query["sql"].upper()
    ]
    assert len(sql) == 2, sql
    assert "LIMIT 101" in sql[0]
    assert "COUNT(" in sql[1]


def test_a_queryset_completer_with_few_rows_is_not_counted(client: Client, books: None) -> None:
    """server/utilities/completion.mdx: total is how many there are; when the first 101
    rows hold them all, the fetch says so and no COUNT is needed."""
    ref = template("books://by/{author}/{title}")
    with CaptureQueriesContext(connection) as queries:
        completion = values(complete(client, ref, "author", "h", at=EXAMPLE))

    assert completion == {"values": ["Hilary Mantel"], "total": 1, "hasMore": False}
    sql = [
        query["sql"].upper()
        for query in queries.captured_queries
        if "AUTHOR" in query["sql"].upper()
    ]
    assert len(sql) == 1, sql
    assert "COUNT(" not in sql[0]


def test_an_argument_without_a_completer_completes_to_nothing(client: Client) -> None:
    """server/utilities/completion.mdx: a known argument with no
    suggestions answers an empty list, not an error."""
    completion = values(complete(client, prompt("everything"), "free", "x"))

    assert completion == {"values": [], "total": 0, "hasMore": False}


def test_at_most_100_values_with_the_total_and_has_more(client: Client) -> None:
    """server/utilities/completion.mdx: values has at most 100 items; total
    may exceed what is sent and hasMore says more exist."""
    completion = values(complete(client, prompt("everything"), "a", "x"))

    assert len(completion["values"]) == 100
    assert completion["values"][:2] == ["x000", "x001"]
    assert (completion["total"], completion["hasMore"]) == (150, True)


def test_exactly_100_values_have_no_more(client: Client) -> None:
    """server/utilities/completion.mdx: hasMore is false when everything was
    sent; values are strings."""
    completion = values(complete(client, prompt("everything"), "b", ""))

    assert completion["values"] == [str(n) for n in range(100)]
    assert (completion["total"], completion["hasMore"]) == (100, False)


def test_a_completer_gets_the_earlier_arguments_its_name_and_the_context(client: Client) -> None:
    """server/utilities/completion.mdx: context.arguments carries values
    already resolved for other arguments."""
    seen.clear()
    completion = values(complete(client, prompt("everything"), "c", "ab", {"a": "x", "b": "7"}))

    assert completion["values"] == ["AB"]
    assert seen == [
        {
            "value": "ab",
            "arguments": {"a": "x", "b": "7"},
            "argument": "c",
            "method": "completion/complete",
        }
    ]


# -- resource template variables -----------------------------------------------------------------


def test_a_template_variable_completes(client: Client, books: None) -> None:
    """server/utilities/completion.mdx: ref/resource names a URI template."""
    ref = template("books://by/{author}/{title}")
    completion = values(complete(client, ref, "author", "h", at=EXAMPLE))

    assert completion["values"] == ["Hilary Mantel"]


def test_context_arguments_narrow_a_later_variable(client: Client, books: None) -> None:
    """server/utilities/completion.mdx: context.arguments are the
    previously-resolved variables of the URI template."""
    ref = template("books://by/{author}/{title}")
    anyone = values(complete(client, ref, "title", "d", at=EXAMPLE))
    herbert = values(complete(client, ref, "title", "d", {"author": "Frank Herbert"}, at=EXAMPLE))

    assert anyone["values"] == ["Double Star", "Dune", "Dune Messiah"]
    assert herbert["values"] == ["Dune", "Dune Messiah"]


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "name"),
    [
        (prompt("nope"), "a"),  # unknown prompt
        (prompt("everything"), "nope"),  # unknown argument
        (template("books://{nope}"), "nope"),  # unknown template
        (template("books://by/{author}/{title}"), "isbn"),  # not a variable of the template
    ],
)
def test_unknown_references_are_invalid_params(client: Client, ref: Any, name: str) -> None:
    """server/utilities/completion.mdx: -32602 for an unknown prompt or
    missing arguments."""
    at = EXAMPLE if ref["type"] == "ref/resource" else "/mcp"
    assert_error(complete(client, ref, name, "", at=at), 200, errors.INVALID_PARAMS)


def test_non_string_context_arguments_are_invalid_params(client: Client) -> None:
    """server/utilities/completion.mdx: context.arguments maps names to
    string values."""
    response = complete(client, prompt("everything"), "c", "", {"a": 1})

    assert_error(response, 200, errors.INVALID_PARAMS)


@pytest.mark.parametrize(
    ("value", "earlier"),
    [
        ("d\x00", None),  # in what was typed
        ("\x00", {"author": "Frank Herbert"}),  # alone
        ("d", {"author": "Frank\x00Herbert"}),  # in an earlier variable
    ],
)
def test_a_nul_character_completes_to_nothing(
    client: Client, books: None, value: str, earlier: dict[str, str] | None
) -> None:
    """server/utilities/completion.mdx: the result is a completion object with values
    (at most 100), total and hasMore. No value with a NUL character can be completed (no
    database column holds one; PostgreSQL refuses it in a query), so a NUL in
    argument.value or context.arguments is answered with no values, not an internal
    error, and the completer is not called."""
    ref = template("books://by/{author}/{title}")
    completion = values(complete(client, ref, "title", value, earlier, at=EXAMPLE))

    assert completion == {"values": [], "total": 0, "hasMore": False}
