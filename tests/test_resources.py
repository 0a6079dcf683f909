"""Resources through HTTP: resources/list, resources/templates/list and resources/read.

The test docstrings paraphrase server/resources.mdx (and server/utilities/caching.mdx and
pagination.mdx) rather than quote them. This module is its own URLconf: the example site of
docs/examples/resources_example.py is served at /example/mcp and a fresh site with the edge
cases at /mcp.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any
from uuid import UUID

import pytest
from django.http import Http404
from django.urls import path

from django_mcp import Annotations, Context, ResourceContents
from django_mcp.exceptions import AlreadyRegistered, InvalidDeclaration
from django_mcp.protocol import errors
from django_mcp.protocol.errors import ResourceNotFound
from django_mcp.sites import MCPSite
from docs.examples import resources_example
from testproject.books.models import Book
from tests.helpers import assert_error, mcp_post, read_resource, result_of

if TYPE_CHECKING:
    from django.test import Client

EXAMPLE = "/example/mcp"

site = MCPSite(name="test-resources")


@site.resource(
    "test://plain",
    meta={"origin": "tests"},
    annotations=Annotations(last_modified="2026-07-28T00:00:00Z"),
)
def plain() -> str:
    """Plain text without a declared type."""
    return "plain"


@site.resource("test://several")
def several() -> list[ResourceContents]:
    """A directory-like resource: several items, each with its own URI."""
    return [
        ResourceContents("test://several/a", text="A", mime_type="text/plain"),
        ResourceContents("test://several/b", blob=b"\x00\x01", mime_type="application/x-b"),
    ]


@site.resource("test://none")
def nothing() -> None:
    """Returns None: nothing is there."""
    return None


@site.resource("test://raises-404")
def raises_404() -> str:
    """Raises Http404."""
    raise Http404("gone")


@site.resource("test://elsewhere")
def elsewhere() -> str:
    """Raises not-found naming another URI; the error must name the one asked for."""
    raise ResourceNotFound("test://other")


@site.resource("test://broken")
def broken() -> str:
    """Fails inside."""
    raise RuntimeError("boom")


@site.resource("test://async", ttl_ms=5_000, cache_scope="public")
async def asynchronous() -> dict[str, int]:
    """An async resource serving JSON."""
    return {"answer": 42}


@site.resource("orders://{number}")
def order(number: int) -> str:
    """Template variables are converted by their type hints."""
    return f"order {number + 1}"


@site.resource("search://books{?q,limit}", mime_type="text/plain")
def search(q: str, limit: int = 10) -> str:
    """A form-style query template."""
    return f"{q}:{limit}"


@site.resource("paths://{+rest}")
def paths(rest: str) -> str:
    """Reserved expansion keeps the slashes."""
    return rest


@site.resource("rows://{key}", cache_scope="public", row_visible=lambda ctx, row: True)
def one_row(key: str) -> str:
    """A template that tells who sees which row: its reads differ by caller."""
    return key


class StaffOnlyStaffURIs(MCPSite):
    """A site that gates ``staff://`` resources with its own ``has_permission``."""

    def has_permission(self, spec: Any, context: Any) -> bool:
        if getattr(spec, "uri", "").startswith("staff://"):
            user = getattr(context, "user", None)
            return bool(user is not None and user.is_staff)
        return True


staff_site = StaffOnlyStaffURIs(name="test-resources-staff")


@staff_site.resource("staff://payroll", cache_scope="public", ttl_ms=60_000)
def payroll() -> str:
    return "salaries"


urlpatterns = [
    path("mcp", site.urls),
    path("example/mcp", resources_example.site.urls),
    path("staff/mcp", staff_site.urls),
]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.usefixtures("no_request_log")]


def listing(client: Client, method: str, *, at: str = "/mcp", **params: Any) -> dict[str, Any]:
    return result_of(mcp_post(client, method, params, path=at))


# -- resources/list and resources/templates/list -----------------------------------------------


def test_resources_list_describes_each_fixed_resource(client: Client) -> None:
    """server/resources.mdx, "Listing Resources": a Resource has uri and
    name, and optionally title, description, mimeType, annotations, size, icons, _meta."""
    resources = {r["uri"]: r for r in listing(client, "resources/list", at=EXAMPLE)["resources"]}

    assert resources["bookshop://about"] == {
        "uri": "bookshop://about",
        "name": "about",
        "title": "About the bookshop",
        "description": "Who we are and when we open.",
        "mimeType": "text/markdown",
        "annotations": {"audience": ["user", "assistant"], "priority": 0.9},
        "icons": [{"src": "https://bookshop.example/icon.png", "mimeType": "image/png"}],
    }
    assert resources["bookshop://logo.png"] == {
        "uri": "bookshop://logo.png",
        "name": "logo",
        "description": "The shop's logo.",
        "mimeType": "image/png",
        "size": 70,  # as docs/guides/resources.md shows
    }
    own = {r["uri"]: r for r in listing(client, "resources/list")["resources"]}
    assert own["test://plain"]["_meta"] == {"origin": "tests"}
    assert own["test://plain"]["annotations"] == {"lastModified": "2026-07-28T00:00:00Z"}


def test_templates_are_listed_apart_from_fixed_resources(client: Client) -> None:
    """server/resources.mdx, "Resource Templates": a ResourceTemplate has
    uriTemplate (RFC 6570) and name; templates are not in resources/list."""
    result = listing(client, "resources/templates/list", at=EXAMPLE)
    fixed = listing(client, "resources/list", at=EXAMPLE)["resources"]

    assert result["resourceTemplates"] == [
        {
            "uriTemplate": "books://{isbn}",
            "name": "book",
            "description": "One book of the catalogue.",
            "mimeType": "application/json",
        },
        {
            "uriTemplate": "shelf://{+path}",
            "name": "shelf",
            "description": "The shop's notices and policies.",
        },
    ]
    assert not any("{" in r["uri"] for r in fixed)


def test_lists_are_in_a_deterministic_order_with_cache_hints(client: Client) -> None:
    """server/resources.mdx and server/utilities/caching.mdx: lists are deterministic and
    carry ttlMs and cacheScope; nothing here is gated, so the lists are public."""
    first = listing(client, "resources/list")
    again = listing(client, "resources/list")
    templates = listing(client, "resources/templates/list")

    uris = [r["uri"] for r in first["resources"]]
    assert uris == sorted(uris) == [r["uri"] for r in again["resources"]]
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [
        "orders://{number}",
        "paths://{+rest}",
        "rows://{key}",
        "search://books{?q,limit}",
    ]
    for result in (first, templates):
        assert result["ttlMs"] == 60_000
        assert result["cacheScope"] == "public"


def test_list_ttl_follows_the_site_setting(client: Client, settings: Any) -> None:
    """server/utilities/caching.mdx (CacheableResult): ttlMs is the server's
    freshness hint; the LIST_TTL_MS setting chooses it."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LIST_TTL_MS": 0}

    assert listing(client, "resources/list")["ttlMs"] == 0
    assert listing(client, "resources/templates/list")["ttlMs"] == 0


@pytest.mark.parametrize(
    ("method", "key"),
    [("resources/list", "resources"), ("resources/templates/list", "resourceTemplates")],
)
def test_resource_lists_page_with_signed_cursors(
    client: Client, settings: Any, method: str, key: str
) -> None:
    """server/utilities/pagination.mdx: nextCursor while more
    remain; the same cacheScope on every page; a forged cursor is -32602."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "PAGE_SIZE": 2}
    everything = []
    cursor = None
    pages = 0
    while True:
        params = {} if cursor is None else {"cursor": cursor}
        page = listing(client, method, **params)
        everything += page[key]
        pages += 1
        assert page["cacheScope"] == "public"
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "PAGE_SIZE": 100}

    assert everything == listing(client, method)[key]
    assert pages == (len(everything) + 1) // 2
    assert_error(mcp_post(client, method, {"cursor": cursor or "x"}), 200, errors.INVALID_PARAMS)


# -- resources/read ----------------------------------------------------------------------------


def test_reading_text_gives_its_contents_and_declared_ttl(client: Client) -> None:
    """server/resources.mdx, "Reading Resources": contents items carry uri,
    mimeType and text; the result carries ttlMs and cacheScope."""
    result = result_of(read_resource(client, "bookshop://about", path=EXAMPLE))

    assert result["contents"] == [
        {
            "uri": "bookshop://about",
            "mimeType": "text/markdown",
            "text": "# The bookshop\n\nOpen every day from nine to six.",
        }
    ]
    assert result["ttlMs"] == 3_600_000
    assert result["cacheScope"] == "public"


def test_reading_bytes_gives_a_base64_blob(client: Client) -> None:
    """server/resources.mdx, "Binary Content": a blob item carries the
    base64 data and its mimeType."""
    (item,) = result_of(read_resource(client, "bookshop://logo.png", path=EXAMPLE))["contents"]

    assert item == {
        "uri": "bookshop://logo.png",
        "mimeType": "image/png",
        "blob": base64.b64encode(resources_example.LOGO_PNG).decode(),
    }


def test_read_ttl_defaults_to_the_site_setting(client: Client, settings: Any) -> None:
    """server/utilities/caching.mdx: resources/read carries ttlMs; without a
    per-declaration ttl_ms the RESOURCE_TTL_MS setting applies."""
    assert result_of(read_resource(client, "test://plain"))["ttlMs"] == 0
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "RESOURCE_TTL_MS": 1234}
    assert result_of(read_resource(client, "test://plain"))["ttlMs"] == 1234
    assert result_of(read_resource(client, "test://async"))["ttlMs"] == 5_000


def test_text_without_a_declared_type_is_text_plain(client: Client) -> None:
    """server/resources.mdx, "Text Content": mimeType is optional; a str
    resource is served as text/plain."""
    (item,) = result_of(read_resource(client, "test://plain"))["contents"]

    assert item == {"uri": "test://plain", "mimeType": "text/plain", "text": "plain"}


def test_a_resource_may_return_several_items(client: Client) -> None:
    """server/resources.mdx, "Reading Resources": several items are allowed,
    for example the files of a directory; text and blob may mix."""
    contents = result_of(read_resource(client, "test://several"))["contents"]

    assert contents == [
        {"uri": "test://several/a", "mimeType": "text/plain", "text": "A"},
        {"uri": "test://several/b", "mimeType": "application/x-b", "blob": "AAE="},
    ]


def test_async_resources_serve_json(client: Client) -> None:
    """server/resources.mdx, "Text Content": other values are served as JSON text; the
    declaration's ttl_ms and cache_scope win over the site's."""
    result = result_of(read_resource(client, "test://async"))

    assert result["contents"] == [
        {"uri": "test://async", "mimeType": "application/json", "text": '{"answer": 42}'}
    ]
    assert (result["ttlMs"], result["cacheScope"]) == (5_000, "public")


def test_a_template_read_passes_the_variables(client: Client, book: Book) -> None:
    """server/resources.mdx, "Resource Templates": a concrete URI that
    matches a template is served with its variables."""
    (item,) = result_of(read_resource(client, f"books://{book.isbn}", path=EXAMPLE))["contents"]

    assert item["uri"] == "books://9780441013593"
    assert item["mimeType"] == "application/json"
    assert json.loads(item["text"]) == {
        "isbn": "9780441013593",
        "title": "Dune",
        "author": "Frank Herbert",
    }


def test_template_variables_are_converted_and_percent_decoded(client: Client) -> None:
    """server/resources.mdx, "Resource Templates": templates follow RFC 6570 (simple,
    reserved and form-style query expansions)."""
    assert result_of(read_resource(client, "orders://41"))["contents"][0]["text"] == "order 42"
    assert result_of(read_resource(client, "orders://0"))["contents"][0]["text"] == "order 1"
    searched = result_of(read_resource(client, "search://books?q=le%20guin&limit=3"))
    assert searched["contents"][0] == {
        "uri": "search://books?q=le%20guin&limit=3",
        "mimeType": "text/plain",
        "text": "le guin:3",
    }
    assert result_of(read_resource(client, "search://books?q=x"))["contents"][0]["text"] == "x:10"
    assert result_of(read_resource(client, "paths://a/b/c"))["contents"][0]["text"] == "a/b/c"


def test_a_per_caller_resource_is_private(client: Client, django_user_model: Any) -> None:
    """server/utilities/caching.mdx: "private" results are reused only within
    the same authorization context; a resource depending on the caller declares it."""
    anonymous = result_of(read_resource(client, "bookshop://me", path=EXAMPLE))
    client.force_login(django_user_model.objects.create_user("ada"))
    named = result_of(read_resource(client, "bookshop://me", path=EXAMPLE))

    assert anonymous["contents"][0]["text"] == "anonymous"
    assert named["contents"][0]["text"] == "ada"
    assert named["cacheScope"] == "private"


@pytest.mark.django_db
def test_a_resource_the_sites_has_permission_gates_is_never_public(
    client: Client, django_user_model: Any
) -> None:
    """server/utilities/caching.mdx: ``public`` may be shared across users; a resource
    only staff may read is private, whether its own permission or the site's
    ``has_permission`` gates it, even where it declares ``cache_scope="public"``."""
    client.force_login(django_user_model.objects.create_user("boss", is_staff=True))
    result = result_of(read_resource(client, "staff://payroll", path="/staff/mcp"))
    client.logout()
    hidden = read_resource(client, "staff://payroll", path="/staff/mcp")

    assert_error(hidden, 200, errors.INVALID_PARAMS)  # the site does gate it
    assert result["cacheScope"] == "private"


def test_a_template_that_checks_rows_is_never_public(client: Client) -> None:
    """server/utilities/caching.mdx: ``public`` results have no per-user data; a template
    given ``row_visible`` says its rows differ by caller, so its reads are private even
    where it declares ``cache_scope="public"``."""
    result = result_of(read_resource(client, "rows://7"))

    assert (result["contents"][0]["text"], result["cacheScope"]) == ("7", "private")


# -- not found ---------------------------------------------------------------------------------

NOT_FOUND = [
    ("/mcp", "test://unknown"),  # no declaration
    ("/mcp", "test://raises-404"),  # Http404
    ("/mcp", "test://none"),  # the function returned None
    ("/mcp", "test://elsewhere"),  # ResourceNotFound for another URI
    ("/mcp", "orders://not-a-number"),  # a variable that does not convert
    ("/mcp", "search://books?limit=3"),  # a required query variable is missing
    (EXAMPLE, "books://0000000000000"),  # DoesNotExist
]


@pytest.mark.django_db
@pytest.mark.parametrize(("at", "uri"), NOT_FOUND)
def test_not_found_is_invalid_params_naming_the_uri(client: Client, at: str, uri: str) -> None:
    """server/resources.mdx, "Error Handling": not found MUST be -32602 with
    the URI in data, MUST NOT be an empty contents array, never the old -32002."""
    error = assert_error(read_resource(client, uri, path=at), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}


NUL_VARIABLES = [
    (EXAMPLE, "books://978%0001"),  # would reach a database query (PostgreSQL refuses NUL)
    (EXAMPLE, "books://%00"),  # the whole value
    ("/mcp", "paths://a/%00/b"),  # a reserved expansion
    ("/mcp", "search://books?q=le%00guin"),  # a form-style query variable
]


@pytest.mark.django_db
@pytest.mark.parametrize(("at", "uri"), NUL_VARIABLES)
def test_a_variable_decoding_to_nul_is_not_found(client: Client, at: str, uri: str) -> None:
    """server/resources.mdx, "Error Handling" and "Security Considerations": servers MUST
    validate resource URIs, and a resource that is not found is -32602 with the URI in
    data. No resource is named by a variable that percent-decodes to a NUL character, so
    the URI matches no template: not found, never an internal error."""
    error = assert_error(read_resource(client, uri, path=at), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}


#: Each names order 41 to int(), so each would be another URI of the same resource.
NOT_CANONICAL_INTEGERS = [
    "orders://4_1",  # a digit separator
    "orders://%2041",  # leading space
    "orders://41%20",  # trailing space
    "orders://%2B41",  # a plus sign
    "orders://41.0",  # a whole float
    "orders://%D9%A4%D9%A1",  # Arabic-Indic digits
    "orders://%EF%BC%94%EF%BC%91",  # fullwidth digits
    "orders://041",  # a leading zero
    "orders://-0",  # minus zero, which is 0
    "search://books?q=x&limit=1_0",  # a query variable
]


@pytest.mark.parametrize("uri", NOT_CANONICAL_INTEGERS)
def test_an_int_variable_accepts_only_ascii_digits(client: Client, uri: str) -> None:
    """server/resources.mdx, "Resource Templates" and "Security Considerations": servers
    MUST validate resource URIs. A variable typed int is spelled as ``str(int)`` spells
    it: ASCII digits without leading zeros and an optional leading minus; the other
    spellings int() would accept (``041``, ``-0``, ``1_000``, `` 7``, ``+7``, ``7.0``,
    non-ASCII digits) are not found, so one resource is not named by many URIs."""
    error = assert_error(read_resource(client, uri), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}


def test_an_int_variable_reads_ascii_digits_and_a_minus(client: Client) -> None:
    """server/resources.mdx, "Resource Templates": the spellings that are numbers still
    convert."""
    assert result_of(read_resource(client, "orders://-2"))["contents"][0]["text"] == "order -1"
    assert result_of(read_resource(client, "orders://41"))["contents"][0]["text"] == "order 42"
    assert result_of(read_resource(client, "orders://0"))["contents"][0]["text"] == "order 1"
    limited = result_of(read_resource(client, "search://books?q=x&limit=10"))
    assert limited["contents"][0]["text"] == "x:10"


CANONICAL_UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"
#: Each names the same UUID to ``UUID()`` (and to pydantic), so each would be another URI
#: of the same resource.
NOT_CANONICAL_UUIDS = [
    CANONICAL_UUID.upper(),
    CANONICAL_UUID.replace("-", ""),
    "%7B" + CANONICAL_UUID + "%7D",  # in braces
    "urn:uuid:" + CANONICAL_UUID,
]


@pytest.mark.parametrize("spelling", NOT_CANONICAL_UUIDS)
@pytest.mark.parametrize("optional", [False, True], ids=["UUID", "UUID | None"])
def test_a_uuid_variable_has_one_spelling(
    client: Client, mcp_site: MCPSite, spelling: str, optional: bool
) -> None:
    """server/resources.mdx, "Resource Templates" and "Security Considerations": servers
    MUST validate resource URIs. A variable typed ``UUID`` is spelled as ``str(uuid)``
    spells it, lowercase and hyphenated; uppercase, bare hex, braces or a ``urn:uuid:``
    prefix are not found, so a client subscribed to one spelling does not miss changes
    announced at another."""

    def ticket(ticket_id: UUID) -> str:
        return f"ticket {ticket_id}"

    def maybe(ticket_id: UUID | None = None) -> str:
        return f"ticket {ticket_id}"

    mcp_site.resource("tickets://{ticket_id}")(maybe if optional else ticket)
    found = result_of(read_resource(client, f"tickets://{CANONICAL_UUID}"))
    assert found["contents"][0]["text"] == f"ticket {CANONICAL_UUID}"

    uri = f"tickets://{spelling}"
    error = assert_error(read_resource(client, uri), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}


def test_a_failing_resource_is_an_internal_error(client: Client, settings: Any) -> None:
    """server/resources.mdx, "Error Handling": -32603 for internal errors."""
    settings.DEBUG = False
    error = assert_error(read_resource(client, "test://broken"), 200, errors.INTERNAL_ERROR)

    assert "boom" not in json.dumps(error)


def test_resource_methods_do_not_exist_without_resources(client: Client, mcp_site: MCPSite) -> None:
    """server/resources.mdx, "Capabilities": servers that support resources MUST declare
    the capability; without it each resource method is -32601, HTTP 404
    (basic/transports/streamable-http.mdx)."""
    mcp_site.tool(lambda: "x", name="t")

    assert "resources" not in result_of(mcp_post(client, "server/discover"))["capabilities"]
    for method, params in [
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "test://plain"}),
    ]:
        assert_error(mcp_post(client, method, params), 404, errors.METHOD_NOT_FOUND)


def test_discover_advertises_resources(client: Client) -> None:
    """server/resources.mdx, "Capabilities": the resources capability is declared."""
    assert "resources" in result_of(mcp_post(client, "server/discover"))["capabilities"]


# -- declarations ------------------------------------------------------------------------------


def test_resource_declarations_are_checked_when_registered() -> None:
    """server/resources.mdx, "Resource Templates": a template's variables are the
    function's parameters; a fixed URI has none; one declaration per URI."""
    other = MCPSite(name="declarations")

    def takes_an_argument(isbn: str) -> str:
        return isbn

    def takes_nothing() -> str:
        return ""

    with pytest.raises(InvalidDeclaration):
        other.resource("fixed://x")(takes_an_argument)
    with pytest.raises(InvalidDeclaration) as extra:
        other.resource("t://{isbn}/{extra}")(takes_an_argument)
    assert str(extra.value).endswith(
        "must be its URI variables ['isbn', 'extra']: the function has no parameter for 'extra'."
    )
    with pytest.raises(InvalidDeclaration) as missing:
        other.resource("t://{code}")(takes_an_argument)
    assert str(missing.value).endswith(
        "must be its URI variables ['code']: the function has no parameter for 'code'; "
        "the template has no variable for 'isbn'."
    )
    with pytest.raises(InvalidDeclaration):
        other.resource("t://{isbn}", complete={"nope": lambda value: []})(takes_an_argument)
    with pytest.raises(TypeError):
        other.resource("t://{isbn}", size=3)(takes_an_argument)
    for option in ("visible", "row_visible"):
        with pytest.raises(TypeError, match=f"^{option} applies to resource templates"):
            other.resource("fixed://z", **{option: lambda *args, **kw: True})(takes_nothing)
    other.resource("fixed://y")(takes_nothing)
    with pytest.raises(AlreadyRegistered):
        other.resource("fixed://y")(takes_nothing)


@pytest.mark.parametrize(
    "options", [{"cache_scope": "shared"}, {"ttl_ms": -1}, {"ttl_ms": 1.5}, {"ttl_ms": True}]
)
def test_cache_hints_are_checked_when_registered(options: dict[str, Any]) -> None:
    """server/utilities/caching.mdx (CacheableResult): ttlMs is an integer >= 0
    and cacheScope is "public" or "private"; a declaration that would break the result
    schema fails at import time."""

    def takes_nothing() -> str:
        return ""

    with pytest.raises(InvalidDeclaration):
        MCPSite(name="hints").resource("fixed://z", **options)(takes_nothing)


@pytest.mark.parametrize(
    "options",
    [
        {"size": "12 KB"},
        {"size": -1},
        {"size": 1.5},
        {"size": True},
        {"annotations": Annotations(priority=5)},
        {"annotations": Annotations(priority=-0.1)},
        {"annotations": Annotations(priority="high")},  # type: ignore[arg-type]
        {"annotations": Annotations(audience=["robot"])},  # type: ignore[list-item]
        {"annotations": Annotations(audience="user")},  # type: ignore[arg-type]
        {"annotations": Annotations(last_modified=1700000000)},  # type: ignore[arg-type]
        {"annotations": {"priority": 0.5}},
    ],
)
def test_metadata_that_breaks_the_schema_is_refused_when_registered(
    options: dict[str, Any],
) -> None:
    """server/resources.mdx, "Resource" and "Annotations" (schema.json): size is an integer
    of bytes, priority a number in [0, 1], audience only "user" and "assistant"; a
    declaration that would make resources/list schema-invalid fails at import time."""

    def takes_nothing() -> str:
        return ""

    with pytest.raises(InvalidDeclaration):
        MCPSite(name="metadata").resource("fixed://m", **options)(takes_nothing)


def test_template_annotations_are_checked_when_registered() -> None:
    """server/resources.mdx, "Resource Templates": a template's annotations follow the same
    schema as a resource's."""

    def takes_isbn(isbn: str) -> str:
        return isbn

    with pytest.raises(InvalidDeclaration):
        MCPSite(name="metadata").resource("t://{isbn}", annotations=Annotations(priority=2))(
            takes_isbn
        )


def test_valid_size_and_annotations_are_listed(client: Client, mcp_site: MCPSite) -> None:
    """server/resources.mdx, "Resource": size 0 and priority at the bounds are valid."""
    mcp_site.resource(
        "fixed://ok",
        size=0,
        annotations=Annotations(audience=["user", "assistant"], priority=1, last_modified="x"),
    )(lambda: "")

    (item,) = result_of(mcp_post(client, "resources/list"))["resources"]

    assert item["size"] == 0
    assert item["annotations"] == {
        "audience": ["user", "assistant"],
        "priority": 1,
        "lastModified": "x",
    }


def test_a_context_parameter_is_not_a_template_variable() -> None:
    """server/resources.mdx, "Resource Templates": only URI variables are parameters; a
    Context is injected."""
    other = MCPSite(name="context-param")

    def who(isbn: str, ctx: Context) -> str:
        return isbn

    other.resource("who://{isbn}")(who)
    assert [t.uri for t in other.get_resource_templates()] == ["who://{isbn}"]
