"""Query counts of the ModelTools actions, pinned (django_assert_num_queries).

Every count is for one whole HTTP request through the Django test client, so it includes
what the middleware does. Anonymous callers cost nothing before the action (no session
cookie, so no session or user query). A logged-in caller adds 2 queries (the session row
and the user row); a caller who is not a superuser adds 2 more the first time a Django
permission is checked in the request (their own and their groups' permissions; Django then
caches them on the user for the rest of the request). Tests run inside a transaction, so
each write's ``transaction.atomic`` shows up as SAVEPOINT and RELEASE SAVEPOINT (2
queries); outside tests it is a BEGIN and COMMIT the query log does not count.

The module is its own URLconf: the example site of docs/examples/modeltools_example.py at
/example/mcp; at /mcp and /naive/mcp, books whose serializer reads the related author's
name, with and without list_select_related.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import Group, User
from django.urls import path
from rest_framework import serializers

import django_mcp
from django_mcp.sites import MCPSite
from docs.examples import modeltools_example
from testproject.books.models import Author, Book
from tests.helpers import call_tool, mcp_post, result_of

if TYPE_CHECKING:
    from django.db.models import QuerySet
    from django.test import Client

EXAMPLE = "/example/mcp"
SESSION = 2  # the session row and the user row of a logged-in caller
PERMISSIONS = 2  # user and group permissions, once per request, for a non-superuser
ATOMIC = 2  # SAVEPOINT and RELEASE SAVEPOINT inside the test's transaction

site = MCPSite(name="modeltools-queries")


class BookWithAuthorSerializer(serializers.ModelSerializer[Book]):
    author_name = serializers.CharField(source="author.name", read_only=True)

    class Meta:
        model = Book
        fields = ["isbn", "title", "author_name"]


@django_mcp.register(Book, site=site)
class BookTools(django_mcp.ModelTools):
    serializer_class = BookWithAuthorSerializer
    list_select_related = ["author"]


naive_site = MCPSite(name="modeltools-queries-naive")


@django_mcp.register(Book, site=naive_site)
class NaiveBookTools(django_mcp.ModelTools):
    serializer_class = BookWithAuthorSerializer  # no list_select_related: N+1


users_site = MCPSite(name="modeltools-queries-users")


@django_mcp.register(User, site=users_site)
class UserTools(django_mcp.ModelTools):
    fields = ["id", "username", "groups"]
    actions = ["list"]

    def get_queryset(self, ctx: Any) -> QuerySet[Any]:
        # A many-to-many field cannot be joined (list_select_related); it is prefetched.
        return super().get_queryset(ctx).prefetch_related("groups")


urlpatterns = [
    path("mcp", site.urls),
    path("naive/mcp", naive_site.urls),
    path("users/mcp", users_site.urls),
    path("example/mcp", modeltools_example.site.urls),
]

pytestmark = pytest.mark.urls(__name__)


def call(client: Client, name: str, arguments: dict[str, Any], *, at: str = EXAMPLE) -> Any:
    result = result_of(call_tool(client, name, arguments, path=at))
    assert result.get("isError") is not True, result
    return result["structuredContent"]


@pytest.fixture
def many_books(catalogue: Any) -> None:
    """Twenty more published books by several authors, so N+1 would show."""
    for n in range(20):
        author = Author.objects.create(name=f"Author {n}")
        Book.objects.create(
            isbn=f"97800000000{n:02}",
            title=f"Book {n:02}",
            author=author,
            price=Decimal(1),
            published=catalogue["books"][0].published,
        )


# -- reads -----------------------------------------------------------------------------------


def test_list_is_a_count_and_one_select_however_many_rows(
    client: Client, many_books: None, django_assert_num_queries: Any
) -> None:
    """Not N+1: COUNT + SELECT for a page of 24 rows with a foreign key (the serializer
    reads author_id, not the author)."""
    with django_assert_num_queries(2):
        page = call(client, "search_books", {"page_size": 100})

    assert len(page["results"]) == 24


def test_searching_and_filtering_a_list_still_costs_two_queries(
    client: Client, many_books: None, catalogue: Any, django_assert_num_queries: Any
) -> None:
    """Search across a relation (author__name) is a join, not extra queries."""
    with django_assert_num_queries(2):
        call(client, "search_books", {"search": "herbert", "author": catalogue["herbert"].pk})


def test_list_select_related_keeps_related_fields_to_one_select(
    client: Client, many_books: None, django_assert_num_queries: Any
) -> None:
    """A serializer reading author.name joins the author with list_select_related..."""
    with django_assert_num_queries(2):
        page = call(client, "book_list", {"page_size": 100}, at="/mcp")

    assert {"isbn": "9780441013593", "title": "Dune", "author_name": "Frank Herbert"} in (
        page["results"]
    )


def test_a_many_to_many_field_prefetched_in_get_queryset_costs_one_query(
    client: Client, db: None, django_assert_num_queries: Any
) -> None:
    """A serializer listing a many-to-many field (``groups``) reads it per row unless
    ``get_queryset`` prefetches it: then the list is the count, the page and one query
    for every row's groups."""
    staff = Group.objects.create(name="staff")
    for n in range(30):
        User.objects.create(username=f"u{n}").groups.add(staff)

    with django_assert_num_queries(3):
        page = call(client, "user_list", {"page_size": 30}, at="/users/mcp")

    assert len(page["results"]) == 30
    assert all(row["groups"] == [staff.pk] for row in page["results"])


def test_without_list_select_related_the_same_list_is_n_plus_1(
    client: Client, many_books: None, django_assert_num_queries: Any
) -> None:
    """...and without it every row costs one more query (this is what the pins catch)."""
    with django_assert_num_queries(2 + 25):
        page = call(client, "book_list", {"page_size": 100}, at="/naive/mcp")

    assert len(page["results"]) == 25


def test_get_is_one_query(client: Client, catalogue: Any, django_assert_num_queries: Any) -> None:
    """One SELECT of the row, within get_queryset."""
    with django_assert_num_queries(1):
        call(client, "book_get", {"isbn": "9780441013593"})


def test_a_logged_in_caller_adds_the_session_and_user(
    client: Client, catalogue: Any, boss: Any, django_assert_num_queries: Any
) -> None:
    """A superuser passes every permission check without a query."""
    client.force_login(boss)
    with django_assert_num_queries(SESSION + 2):
        call(client, "search_books", {})
    with django_assert_num_queries(SESSION + 1):
        call(client, "book_get", {"isbn": "9999999999999"})


def test_tools_list_costs_only_the_permission_lookup(
    client: Client, catalogue: Any, editor: Any, django_assert_num_queries: Any
) -> None:
    """Listing tools runs no model query; gated tools check the caller's permissions
    once per request."""
    with django_assert_num_queries(0):
        result_of(mcp_post(client, "tools/list", path=EXAMPLE))
    client.force_login(editor)
    with django_assert_num_queries(SESSION + PERMISSIONS):
        result_of(mcp_post(client, "tools/list", path=EXAMPLE))


# -- writes ----------------------------------------------------------------------------------


def test_create_validates_and_inserts(
    client: Client, catalogue: Any, editor: Any, django_assert_num_queries: Any
) -> None:
    """The ISBN uniqueness check, the author lookup, then one INSERT."""
    client.force_login(editor)
    arguments = {"isbn": "9780765326355", "title": "T", "author": catalogue["herbert"].pk}
    with django_assert_num_queries(SESSION + PERMISSIONS + ATOMIC + 3):
        call(client, "book_create", arguments)


def test_update_reads_the_row_then_updates_it(
    client: Client, catalogue: Any, editor: Any, django_assert_num_queries: Any
) -> None:
    """SELECT the row, UPDATE it (a price change needs no uniqueness check)."""
    client.force_login(editor)
    with django_assert_num_queries(SESSION + PERMISSIONS + ATOMIC + 2):
        call(client, "book_update", {"isbn": "9780441013593", "price": "3.00"})


def test_delete_reads_the_row_then_deletes_it(
    client: Client, catalogue: Any, editor: Any, django_assert_num_queries: Any
) -> None:
    """SELECT the row, DELETE it (books have no dependent rows to collect)."""
    client.force_login(editor)
    with django_assert_num_queries(SESSION + PERMISSIONS + ATOMIC + 2):
        call(client, "book_delete", {"isbn": "9780441013593"})
