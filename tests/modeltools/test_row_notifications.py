"""A listen stream hears only of rows ``get_queryset`` shows its caller.

``resource_uri`` makes every save of the model announce the row's URI to streams
subscribed to the template. basic/utilities/subscriptions.mdx sends
``notifications/resources/updated`` for subscribed resources; a row ``resources/read``
answers "not found" to a caller is not one of theirs, and its key (an ISBN) is data. A
change names its row by primary key inside the server, and the listener asks the
template's ``row_visible`` check, which ModelTools answers through ``get_queryset`` and
``has_object_permission`` for that row: not for any row the URI's key could name.
"""

# ModelTools options are class attributes read once, like ModelAdmin's.
# ruff: noqa: RUF012

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from django.test import Client
from django.urls import path

import django_mcp
from django_mcp import Context
from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book
from tests.helpers import mcp_post
from tests.streams import sse

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from django.db.models import QuerySet

site = MCPSite(name="row-notifications")
everyones = MCPSite(name="row-notifications-unscoped")


@django_mcp.register(Book, site=everyones)
class EveryBookTools(django_mcp.ModelTools):
    """Every row is everyone's: no get_queryset of its own."""

    fields = ["id", "isbn", "title"]
    lookup_field = "isbn"
    resource_uri = "ebooks://{isbn}"


@django_mcp.register(Book, site=site)
class PublishedBookTools(EveryBookTools):
    """As docs/examples/modeltools_example.py: unpublished books only for staff."""

    resource_uri = "lbooks://{isbn}"

    def get_queryset(self, ctx: Context) -> QuerySet[Any]:
        books = super().get_queryset(ctx)
        if ctx.user is None or not ctx.user.is_staff:
            books = books.filter(published__isnull=False)
        return books


urlpatterns = [path("mcp", site.urls), path("every/mcp", everyones.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db(transaction=True)]


@pytest.fixture
def client(settings: Any) -> Client:
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_WSGI_STREAMS": 4,
        "LISTEN_KEEPALIVE_SECONDS": 0.05,
    }
    return Client(**{"wsgi.multithread": True})


def next_message(chunks: Iterator[bytes], within: float) -> dict[str, Any]:
    deadline = time.monotonic() + within
    for chunk in chunks:
        for frame in sse.parse(chunk):
            if frame.message is not None:
                return frame.message
        assert time.monotonic() < deadline, "no message in time"
    raise AssertionError("the stream ended without a message")


def test_an_anonymous_listener_hears_nothing_of_an_unpublished_book(client: Client) -> None:
    author = Author.objects.create(name="Ada")
    response = mcp_post(
        client,
        "subscriptions/listen",
        {"notifications": {"resourceSubscriptions": ["lbooks://{isbn}"]}},
        id="listen",
    )
    assert response["Content-Type"] == "text/event-stream", response.content
    chunks = iter(response.streaming_content)
    try:
        next(chunks)  # the acknowledgement
        Book.objects.create(isbn="1111111111111", title="Secret draft", author=author)
        Book.objects.create(
            isbn="2222222222222", title="Public", author=author, published="2020-01-01"
        )
        first = next_message(chunks, within=10)
    finally:
        response.close()

    # resources/read of the draft's URI says it does not exist for this caller...
    read = mcp_post(client, "resources/read", {"uri": "lbooks://1111111111111"}).json()
    assert read["error"]["code"] == -32602
    # ...so the stream must not name it either: the first update is the published book.
    assert first["params"]["uri"] == "lbooks://2222222222222", first


def listen(client: Client, template: str, path: str = "/mcp") -> Any:
    response = mcp_post(
        client,
        "subscriptions/listen",
        {"notifications": {"resourceSubscriptions": [template]}},
        id="listen",
        path=path,
    )
    assert response["Content-Type"] == "text/event-stream", response.content
    return response


def first_message_after(response: Any, act: Callable[[], object]) -> dict[str, Any]:
    """The first message ``response``'s stream sends after its acknowledgement once
    ``act()`` has run; the stream is closed after."""
    chunks = iter(response.streaming_content)
    try:
        next(chunks)  # the acknowledgement
        act()
        return next_message(chunks, within=10)
    finally:
        response.close()


def test_an_unscoped_rows_deletion_still_reaches_its_listeners(client: Client) -> None:
    """A class that scopes no rows checks no row: its deletions are announced (a read
    then answers "not found"), as basic/utilities/subscriptions.mdx has a changed resource
    announced. A scoping class cannot tell who could see a deleted row, so it announces
    no deletion (tested above by omission: only rows the caller sees reach it)."""
    author = Author.objects.create(name="Ada")
    book = Book.objects.create(isbn="3333333333333", title="Gone soon", author=author)
    response = listen(client, "ebooks://{isbn}", path="/every/mcp")
    deleted = first_message_after(response, book.delete)
    assert deleted["method"] == "notifications/resources/updated"
    assert deleted["params"]["uri"] == "ebooks://3333333333333"


def test_rows_a_queryset_scopes_are_never_cached_publicly(
    client: Client, django_user_model: Any
) -> None:
    """server/utilities/caching.mdx: ``public`` "has no per-user data and may be shared
    across users"; a row get_queryset shows to staff only is per-user. A class that scopes
    no rows keeps the site's default."""
    author = Author.objects.create(name="Ada")
    Book.objects.create(isbn="1111111111111", title="Secret draft", author=author)
    client.force_login(django_user_model.objects.create_user("boss", is_staff=True))
    scoped = mcp_post(client, "resources/read", {"uri": "lbooks://1111111111111"}).json()
    unscoped = mcp_post(
        client, "resources/read", {"uri": "ebooks://1111111111111"}, path="/every/mcp"
    ).json()
    assert scoped["result"]["cacheScope"] == "private"
    assert unscoped["result"]["cacheScope"] == "public"


# -- a non-unique lookup field: the row that changed, not a row with its key -------------

owned = MCPSite(name="row-notifications-owned")


class OwnBookTools(django_mcp.ModelTools):
    """Each caller's own books (the author named as the user), looked up by title, which
    two callers' books may share: the lookup field is not unique (check W017)."""

    fields = ["id", "title"]
    lookup_field = "title"
    resource_uri = "obooks://{title}"

    def get_queryset(self, ctx: Context) -> QuerySet[Any]:
        name = "" if ctx.user is None else ctx.user.get_username()
        return super().get_queryset(ctx).filter(author__name=name)


urlpatterns.append(path("owned/mcp", owned.urls))


@pytest.fixture
def own_books() -> Iterator[None]:
    """Registered for the test only: a non-unique lookup field warns (W017), and the
    project's own check run must stay clean."""
    owned.register(Book, OwnBookTools)
    yield
    owned.unregister(Book)


@pytest.mark.usefixtures("own_books")
def test_a_listener_hears_of_its_own_row_not_of_another_callers_row_with_its_key(
    client: Client, django_user_model: Any
) -> None:
    """basic/utilities/subscriptions.mdx, and ResourceUpdatedNotificationParams in the
    2026-07-28 schema: ``notifications/resources/updated`` names the resource's ``uri``
    and nothing else. Alice's book and Bob's share the title, so the URI
    ``obooks://Notes``; Bob may read his, never hers. The change of hers must not reach
    his stream (that Alice keeps a book of that title is hers to know), while his own
    books' changes do. The row that changed is what is checked, by its primary key,
    which travels with the event inside the server only: the notification is the URI."""
    alice, bob = Author.objects.create(name="alice"), Author.objects.create(name="bob")
    bobs_notes = Book.objects.create(isbn="2000000000001", title="Notes", author=bob)
    client.force_login(django_user_model.objects.create_user("bob"))
    response = listen(client, "obooks://{title}", path="/owned/mcp")
    chunks = iter(response.streaming_content)
    try:
        next(chunks)  # the acknowledgement
        alices_notes = Book.objects.create(isbn="1000000000001", title="Notes", author=alice)
        alices_notes.delete()  # gone from every queryset: told to nobody
        Book.objects.create(isbn="2000000000002", title="Diary", author=bob)
        bobs_notes.save()
        first = next_message(chunks, within=10)
        second = next_message(chunks, within=10)
    finally:
        response.close()

    assert first["params"] == {
        "uri": "obooks://Diary",
        "_meta": first["params"]["_meta"],  # the subscription id, and no row key
    }, first
    assert set(first["params"]["_meta"]) == {"io.modelcontextprotocol/subscriptionId"}
    assert second["params"]["uri"] == "obooks://Notes", second


def test_another_models_watch_announcing_a_row_uri_still_reaches_who_sees_that_row(
    client: Client,
) -> None:
    """``watch()`` is public: a project may announce a row's URI when a related row
    changes (a book's resource shows its author, so an author's save updates the book).
    That change names the author, not a book: the template's ``row_visible`` cannot speak
    for it, and ``visible`` (by the URI's key) decides, as it did before changes named
    their rows. A listener who sees the book hears of it; one who does not, does not."""
    from django_mcp.listen.watch import unwatch, watch

    author = Author.objects.create(name="Ada")
    Book.objects.create(isbn="2222222222222", title="Public", author=author, published="2020-01-01")
    Book.objects.create(isbn="1111111111111", title="Secret draft", author=author)
    receiver = watch(Author, uri=lambda a: f"lbooks://{a.name}", site=site)
    response = listen(client, "lbooks://{isbn}")
    chunks = iter(response.streaming_content)
    try:
        next(chunks)  # the acknowledgement
        author.name = "1111111111111"  # the draft's URI: hidden from this caller
        author.save()
        author.name = "2222222222222"  # the published book's: this caller may read it
        author.save()
        first = next_message(chunks, within=10)
    finally:
        response.close()
        unwatch(Author, receiver)
    assert first["params"]["uri"] == "lbooks://2222222222222", first


def test_a_rows_change_is_announced_at_the_uri_its_template_expands_to(client: Client) -> None:
    """basic/utilities/subscriptions.mdx: a subscriber to a resource's URI hears of its
    changes. The URI of a row is the template's RFC 6570 expansion, where a simple
    ``{isbn}`` percent-encodes every reserved character: ``AC/DC 100%`` is
    ``ebooks://AC%2FDC%20100%25``, which ``resources/read`` answers. The change was
    announced as ``ebooks://AC/DC 100%``, which no subscriber to that URI (nor to the
    template, which it does not match) heard."""
    author = Author.objects.create(name="Ada")
    book = Book.objects.create(isbn="AC/DC 100%", title="Loud", author=author)
    uri = "ebooks://AC%2FDC%20100%25"
    read = mcp_post(client, "resources/read", {"uri": uri}, path="/every/mcp").json()
    assert '"Loud"' in read["result"]["contents"][0]["text"], read
    for subscription in (uri, "ebooks://{isbn}"):
        response = listen(client, subscription, path="/every/mcp")
        changed = first_message_after(response, book.save)
        assert changed["method"] == "notifications/resources/updated"
        assert changed["params"]["uri"] == uri, (subscription, changed)
