"""Permissions: what a caller may not use is absent from every list and answers exactly like
something that does not exist.

The lists "MAY vary by the authorization presented on the request" (server/prompts.mdx and
server/tools.mdx, "Capabilities"), and a result that varies so is "private"
(server/utilities/caching.mdx, CacheableResult). The module is its own URLconf: the example site of
docs/examples/permissions_example.py at /example/mcp and a fresh site with one gated
declaration of each kind at /mcp.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

import json
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import path
from rest_framework.permissions import SAFE_METHODS, BasePermission, DjangoModelPermissions

import django_mcp
from django_mcp import Context, MCPHeader
from django_mcp.protocol import errors
from django_mcp.sites import MCPSite
from docs.examples import permissions_example
from testproject.books.models import Author, Book
from tests.helpers import assert_error, call_tool, mcp_post, result_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.http import HttpResponse

EXAMPLE = "/example/mcp"
STAFF = "/example/staff/mcp"

site = MCPSite(name="test-permissions")


def staff_only(ctx: Context) -> bool:
    return bool(ctx.user is not None and ctx.user.is_staff)


def letters(value: str) -> list[str]:
    return [f"{value}a", f"{value}b"]


@site.tool
def hello() -> str:
    """Open to everyone."""
    return "hello"


@site.tool(permission_required="books.view_book")
def secret_tool() -> str:
    """Needs books.view_book."""
    return "secret"


@site.tool(permission=staff_only)
def regional(region: Annotated[str, MCPHeader("Region")]) -> str:
    """Staff only, with an x-mcp-header argument."""
    return region


@site.resource("open://info")
def info() -> str:
    """Open to everyone."""
    return "info"


@site.resource("secret://plan", permission_required="books.view_book", cache_scope="public")
def plan() -> str:
    """Needs books.view_book (its declared public scope cannot leak it)."""
    return "the plan"


@site.resource("secret://files/{name}", permission=staff_only, complete={"name": letters})
def secret_file(name: str) -> str:
    """Staff only."""
    return name


@site.prompt(permission_required="books.view_book", complete={"topic": letters})
def secret_prompt(topic: str) -> str:
    """Needs books.view_book."""
    return topic


@site.prompt(complete={"topic": letters})
def open_prompt(topic: str) -> str:
    """Open to everyone."""
    return topic


class StaffOnly(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return bool(request.user and request.user.is_staff)


@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    fields = ["id", "isbn", "title", "author", "price"]
    actions = ["list", "get", "create", "update", "delete"]
    permission_classes = [DjangoModelPermissions]


@django_mcp.register(Author, site=site)
class AuthorTools(django_mcp.ModelTools):
    fields = ["id", "name"]
    actions = ["list", "create"]
    permission_classes = [StaffOnly]


class OwnDraftsOnly(BasePermission):
    """An object-level rule, as a DRF viewset declares one: a draft (no ``published``
    date) is its editor's, who alone may read it; a published book is read by anyone
    and changed or deleted only by staff (DRF's ``SAFE_METHODS`` for reads)."""

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        if obj.published is None:
            return bool(request.user.get_username() == "editor")
        return request.method in SAFE_METHODS or bool(request.user.is_staff)


#: Books behind an object-level DRF permission (:class:`OwnDraftsOnly`).
object_site = MCPSite(name="test-object-permissions")


@django_mcp.register(Book, site=object_site)
class GuardedBookTools(django_mcp.ModelTools):
    fields = ["id", "isbn", "title", "published"]
    actions = ["list", "get", "update", "delete"]
    permission_classes = [OwnDraftsOnly]


OBJECTS = "/objects/mcp"

urlpatterns = [
    path("mcp", site.urls),
    path("objects/mcp", object_site.urls),
    path("example/mcp", permissions_example.site.urls),
    path("example/staff/mcp", permissions_example.staff_site.urls),
]

pytestmark = [
    pytest.mark.urls(__name__),
    pytest.mark.django_db,
    pytest.mark.usefixtures("no_request_log"),
]


def make_user(django_user_model: Any, name: str, *codenames: str, **flags: Any) -> User:
    user: User = django_user_model.objects.create_user(name, password="x", **flags)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


@pytest.fixture
def viewer(django_user_model: Any) -> User:
    return make_user(django_user_model, "viewer", "view_book")


@pytest.fixture
def staff(django_user_model: Any) -> User:
    return make_user(django_user_model, "staff", is_staff=True)


def names(client: Client, method: str, key: str, field: str, *, at: str = "/mcp") -> set[str]:
    return {item[field] for item in result_of(mcp_post(client, method, path=at))[key]}


def tool_names(client: Client, *, at: str = "/mcp") -> set[str]:
    return names(client, "tools/list", "tools", "name", at=at)


def same_answer(
    hidden: HttpResponse, unknown: HttpResponse, hidden_name: str, unknown_name: str
) -> None:
    """The two responses are identical once the name asked for is swapped."""
    assert hidden.status_code == unknown.status_code
    expected = json.loads(unknown.content.decode().replace(unknown_name, hidden_name))
    assert hidden.json() == expected


# -- hidden exactly like unknown ---------------------------------------------------------------


def test_a_gated_tool_is_absent_and_answers_like_an_unknown_one(client: Client) -> None:
    """server/tools.mdx, "Error Handling": an unknown tool is -32602; a tool
    the caller may not use is not listed and gets the very same answer."""
    hidden = call_tool(client, "secret_tool")
    unknown = call_tool(client, "no_such_tool")

    assert "secret_tool" not in tool_names(client)
    assert_error(hidden, 200, errors.INVALID_PARAMS)
    same_answer(hidden, unknown, "secret_tool", "no_such_tool")


def test_a_gated_tool_with_header_arguments_is_just_as_unknown(client: Client) -> None:
    """basic/transports/streamable-http.mdx, "Custom Headers from Tool Parameters": Mcp-Param
    headers are checked against the tool's schema; for a hidden tool the schema is not
    revealed, so the answer is still "unknown tool"."""
    headers = {"Mcp-Param-Region": "eu"}
    hidden = call_tool(client, "regional", {"region": "eu"}, headers=headers)
    unknown = call_tool(client, "no_such_tool", {"region": "eu"}, headers=headers)

    same_answer(hidden, unknown, "regional", "no_such_tool")


@pytest.mark.parametrize(
    ("hidden_uri", "unknown_uri"),
    [("secret://plan", "secret://nope"), ("secret://files/a", "nothing://files/a")],
)
def test_a_gated_resource_is_absent_and_reads_like_an_unknown_one(
    client: Client, hidden_uri: str, unknown_uri: str
) -> None:
    """server/resources.mdx, "Error Handling": not found is -32602 with
    data.uri; a resource the caller may not read is not listed and is not found."""
    hidden = mcp_post(client, "resources/read", {"uri": hidden_uri})
    unknown = mcp_post(client, "resources/read", {"uri": unknown_uri})

    assert names(client, "resources/list", "resources", "uri") == {"open://info"}
    assert names(client, "resources/templates/list", "resourceTemplates", "uriTemplate") == set()
    assert assert_error(hidden, 200, errors.INVALID_PARAMS)["data"] == {"uri": hidden_uri}
    same_answer(hidden, unknown, hidden_uri, unknown_uri)


def test_a_gated_prompt_is_absent_and_answers_like_an_unknown_one(client: Client) -> None:
    """server/prompts.mdx, "Error Handling": invalid prompt name: -32602."""
    hidden = mcp_post(client, "prompts/get", {"name": "secret_prompt", "arguments": {"topic": "x"}})
    unknown = mcp_post(
        client, "prompts/get", {"name": "no_such_prompt", "arguments": {"topic": "x"}}
    )

    assert names(client, "prompts/list", "prompts", "name") == {"open_prompt"}
    same_answer(hidden, unknown, "secret_prompt", "no_such_prompt")


@pytest.mark.parametrize(
    ("hidden_ref", "unknown_ref"),
    [
        ({"type": "ref/prompt", "name": "secret_prompt"}, {"type": "ref/prompt", "name": "nope"}),
        (
            {"type": "ref/resource", "uri": "secret://files/{name}"},
            {"type": "ref/resource", "uri": "nothing://files/{name}"},
        ),
    ],
)
def test_gated_completions_answer_like_unknown_references(
    client: Client, hidden_ref: dict[str, str], unknown_ref: dict[str, str]
) -> None:
    """server/utilities/completion.mdx: -32602 for an unknown prompt; what
    the caller may not use cannot be completed either."""
    argument = {"name": "topic" if hidden_ref["type"] == "ref/prompt" else "name", "value": ""}
    hidden = mcp_post(client, "completion/complete", {"ref": hidden_ref, "argument": argument})
    unknown = mcp_post(client, "completion/complete", {"ref": unknown_ref, "argument": argument})

    hidden_key = hidden_ref.get("name") or hidden_ref["uri"]
    unknown_key = unknown_ref.get("name") or unknown_ref["uri"]
    assert_error(hidden, 200, errors.INVALID_PARAMS)
    same_answer(hidden, unknown, hidden_key, unknown_key)


# -- granted -----------------------------------------------------------------------------------


def test_a_permitted_caller_sees_and_uses_everything_granted(client: Client, viewer: User) -> None:
    """server/tools.mdx, "Capabilities": the lists are what is available to
    the requesting client, by its authorization."""
    client.force_login(viewer)

    assert {"hello", "secret_tool"} <= tool_names(client)
    assert "regional" not in tool_names(client)
    assert result_of(call_tool(client, "secret_tool"))["content"][0]["text"] == "secret"
    assert names(client, "resources/list", "resources", "uri") == {"open://info", "secret://plan"}
    read = result_of(mcp_post(client, "resources/read", {"uri": "secret://plan"}))
    assert read["contents"][0]["text"] == "the plan"
    got = mcp_post(client, "prompts/get", {"name": "secret_prompt", "arguments": {"topic": "t"}})
    assert result_of(got)["messages"][0]["content"]["text"] == "t"


def test_a_custom_check_sees_the_context(client: Client, staff: User) -> None:
    """server/resources.mdx: the set may vary by the authorization presented
    on the request; a permission= callable decides from the Context."""
    client.force_login(staff)

    assert names(client, "resources/templates/list", "resourceTemplates", "uriTemplate") == {
        "secret://files/{name}"
    }
    completion = mcp_post(
        client,
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "secret://files/{name}"},
            "argument": {"name": "name", "value": "q"},
        },
    )
    assert result_of(completion)["completion"]["values"] == ["qa", "qb"]
    regional = call_tool(client, "regional", {"region": "eu"}, headers={"Mcp-Param-Region": "eu"})
    assert result_of(regional)["content"][0]["text"] == "eu"


def test_an_inactive_user_is_refused_whatever_it_holds(django_user_model: Any) -> None:
    """server/tools.mdx, "Security Considerations": servers MUST enforce access control;
    Django's rule that inactive users hold no permission applies."""
    client = Client()
    user = make_user(django_user_model, "gone", "view_book", is_active=False)
    client.force_login(user)  # a custom backend may still log inactive users in

    assert "secret_tool" not in tool_names(client)


# -- caching -----------------------------------------------------------------------------------


def test_lists_of_a_site_with_gated_declarations_are_private(client: Client) -> None:
    """server/utilities/caching.mdx: "private" results are reused only within
    the same authorization context; the same cacheScope on every page."""
    for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
        assert result_of(mcp_post(client, method))["cacheScope"] == "private", method


def test_reads_on_a_gated_site_are_private(client: Client, viewer: User) -> None:
    """server/utilities/caching.mdx: a gated resource is never public, even if
    declared so, or a shared cache would serve it to callers without the permission."""
    client.force_login(viewer)

    assert result_of(mcp_post(client, "resources/read", {"uri": "open://info"}))["cacheScope"] == (
        "private"
    )
    assert result_of(mcp_post(client, "resources/read", {"uri": "secret://plan"}))[
        "cacheScope"
    ] == ("private")


def test_a_site_subclass_can_gate_everything(client: Client, staff: User, viewer: User) -> None:
    """server/tools.mdx, "Capabilities": the set may vary by authorization;
    overriding MCPSite.has_permission gates a whole site, its lists become private, and
    its tools answer like unknown ones to everyone else."""
    anonymous = result_of(mcp_post(client, "tools/list", path=STAFF))
    hidden = call_tool(client, "rebuild_search_index", path=STAFF)
    unknown = call_tool(client, "no_such_tool", path=STAFF)
    client.force_login(viewer)
    not_staff = result_of(mcp_post(client, "tools/list", path=STAFF))
    client.force_login(staff)
    granted = result_of(call_tool(client, "rebuild_search_index", path=STAFF))

    assert (anonymous["tools"], anonymous["cacheScope"]) == ([], "private")
    assert not_staff["tools"] == []
    same_answer(hidden, unknown, "rebuild_search_index", "no_such_tool")
    assert granted["content"] == [{"type": "text", "text": "Rebuild scheduled."}]


# -- ModelTools ----------------------------------------------------------------------------------


@pytest.fixture
def dune(db: None) -> Book:
    author = Author.objects.create(name="Frank Herbert")
    return Book.objects.create(isbn="9780441013593", title="Dune", author=author, price=Decimal(9))


def test_default_permissions_are_the_admins_per_action(
    client: Client, django_user_model: Any
) -> None:
    """server/tools.mdx, "Security Considerations": servers MUST enforce access control;
    DEFAULT_PERMISSIONS asks for view_author on reads, add/change/delete_author on writes."""
    anonymous = {n for n in tool_names(client, at=EXAMPLE) if n.startswith("author_")}
    client.force_login(make_user(django_user_model, "reader", "view_author"))
    reader = {n for n in tool_names(client, at=EXAMPLE) if n.startswith("author_")}
    client.force_login(make_user(django_user_model, "writer", "view_author", "add_author"))
    writer = {n for n in tool_names(client, at=EXAMPLE) if n.startswith("author_")}

    assert anonymous == set()
    assert reader == {"author_list", "author_get"}
    assert writer == {"author_list", "author_get", "author_create"}


def test_drf_permission_classes_and_the_hook(client: Client, viewer: User, staff: User) -> None:
    """server/tools.mdx, "Security Considerations": IsAuthenticated hides the book tools
    from anonymous callers; the has_permission hook keeps update for staff."""
    anonymous = tool_names(client, at=EXAMPLE)
    client.force_login(viewer)
    logged_in = tool_names(client, at=EXAMPLE)
    client.force_login(staff)
    staff_names = tool_names(client, at=EXAMPLE)

    assert not {"book_list", "book_get", "book_update"} & anonymous
    assert {"book_list", "book_get"} <= logged_in
    assert "book_update" not in logged_in
    assert "book_update" in staff_names


def test_django_model_permissions_map_actions_to_http_methods(
    client: Client, django_user_model: Any
) -> None:
    """server/tools.mdx, "Security Considerations": DRF's DjangoModelPermissions reads
    GET for list/get, POST for create, PATCH for update and DELETE for delete."""
    client.force_login(make_user(django_user_model, "changer", "change_book"))

    assert {n for n in tool_names(client) if n.startswith("book_")} == {
        "book_list",
        "book_get",
        "book_update",
    }


def test_a_hidden_model_action_answers_like_an_unknown_tool(
    client: Client, viewer: User, dune: Book
) -> None:
    """server/tools.mdx, "Error Handling": a tool the caller may not use answers like an
    unknown one, and the row is untouched."""
    client.force_login(viewer)
    hidden = call_tool(client, "book_delete", {"id": dune.pk})
    unknown = call_tool(client, "no_such_tool", {"id": dune.pk})

    same_answer(hidden, unknown, "book_delete", "no_such_tool")
    assert Book.objects.filter(pk=dune.pk).exists()


def test_drf_permission_classes_work_for_session_users_under_csrf_checks(
    django_user_model: Any, dune: Book
) -> None:
    """server/tools.mdx, "Security Considerations": the DRF check is about the caller, not
    about CSRF (the MCP endpoint is CSRF-exempt and checks Origin instead), so a session
    user's write is allowed by DjangoModelPermissions even when CSRF checks are on."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(django_user_model, "deleter", "delete_book"))
    result = result_of(call_tool(client, "book_delete", {"id": dune.pk}))

    assert result["structuredContent"] == {"deleted": True, "id": dune.pk}
    assert not Book.objects.filter(pk=dune.pk).exists()


def test_a_custom_drf_permission_gets_the_django_user(
    client: Client, staff: User, viewer: User
) -> None:
    """server/tools.mdx, "Security Considerations": a DRF permission class sees the
    request's user."""
    client.force_login(viewer)
    viewer_names = tool_names(client)
    client.force_login(staff)
    staff_names = tool_names(client)

    assert not {"author_list", "author_create"} & viewer_names
    assert {"author_list", "author_create"} <= staff_names
    created = result_of(call_tool(client, "author_create", {"name": "Octavia E. Butler"}))
    assert created["structuredContent"]["name"] == "Octavia E. Butler"


def test_drf_object_permissions_guard_get_update_and_delete(
    client: Client, django_user_model: Any, dune: Book
) -> None:
    """server/tools.mdx, "Security Considerations": a DRF class's
    ``has_object_permission`` (an ``IsOwner`` rule ported from a viewset) guards each row
    as DRF's ``get_object`` does, by the REST method of the action: a row it refuses is
    "not found", exactly as a missing one. It was never asked, so every row was open."""
    draft = Book.objects.create(isbn="1", title="Draft", author=dune.author, price=Decimal(1))
    Book.objects.filter(pk=dune.pk).update(published="1965-08-01")
    missing = {"id": 999_999}

    def tool_error(name: str, arguments: dict[str, Any]) -> str:
        result = result_of(call_tool(client, name, arguments, path=OBJECTS))
        assert result["isError"], result
        return str(result["content"][0]["text"]).replace(str(arguments["id"]), "N")

    client.force_login(make_user(django_user_model, "reader"))
    assert (
        result_of(call_tool(client, "book_get", {"id": dune.pk}, path=OBJECTS))[
            "structuredContent"
        ]["title"]
        == "Dune"
    )
    for name, arguments in [
        ("book_get", {"id": draft.pk}),
        ("book_update", {"id": dune.pk, "title": "Dune!"}),
        ("book_delete", {"id": dune.pk}),
    ]:
        assert tool_error(name, arguments) == tool_error(name, {**arguments, **missing})
    assert Book.objects.get(pk=dune.pk).title == "Dune"

    client.force_login(make_user(django_user_model, "editor"))
    assert (
        result_of(call_tool(client, "book_get", {"id": draft.pk}, path=OBJECTS))[
            "structuredContent"
        ]["title"]
        == "Draft"
    )
    client.force_login(make_user(django_user_model, "boss", is_staff=True))
    updated = call_tool(client, "book_update", {"id": dune.pk, "title": "Dune!"}, path=OBJECTS)
    assert result_of(updated)["structuredContent"]["title"] == "Dune!"


def test_rows_behind_an_object_permission_are_scoped_rows() -> None:
    """basic/utilities/subscriptions.mdx (nothing the client may not see) and
    server/resources.mdx (cache hints): rows an object-level rule may refuse are scoped
    by caller like a ``get_queryset`` override's, so their changes reach only listeners
    who may read them, their deletions none, and they are never cached as public. A class
    with only model-level classes scopes nothing."""
    from rest_framework.permissions import IsAuthenticated

    from django_mcp.modeltools.registration import scopes_rows

    assert scopes_rows(object_site.registered_models()[Book])
    assert not scopes_rows(site.registered_models()[Book])  # DjangoModelPermissions
    composed = type("Composed", (GuardedBookTools,), {})
    composed.permission_classes = [IsAuthenticated & OwnDraftsOnly]
    assert scopes_rows(composed(Book, MCPSite(name="composed")))
