"""Model changes announced to listen streams once committed (``watch`` and ``ModelTools``
``resource_uri``), in-process.

basic/patterns/subscriptions.mdx: ``notifications/resources/updated``
with ``{uri}`` goes to streams subscribed to that URI (or a parent of it). A change that is
not committed has not happened: it is announced after commit, never before, never on
rollback.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from django.db import transaction
from django.test.utils import isolate_apps

import django_mcp
from django_mcp.listen import watch as watch_module
from django_mcp.listen.watch import pk_of, row_of, unwatch, watch
from django_mcp.protocol.uritemplate import InvalidTemplate, URITemplate
from django_mcp.sites import MCPSite
from django_mcp.sites import site as default_site
from testproject.books.models import Author, Book

from . import sse

if TYPE_CHECKING:
    from django.test import Client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Every change a watcher publishes, as ``(uri, site)`` (the row it names too, for
    the listeners' check, is left out here)."""
    calls: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        watch_module,
        "notify_row_updated",
        lambda uri, row, *, site=None: calls.append((uri, site)),
    )
    return calls


def test_a_model_tools_save_is_announced_after_commit_not_before(published: list[Any]):
    """basic/patterns/subscriptions.mdx: ``resources/updated`` announces a change; ModelTools
    ``resource_uri = "authors://{id}"`` (testproject.books) watches Author:
    inside the transaction nothing is published; the commit publishes the instance URI on
    the ModelTools' site."""
    with transaction.atomic():
        author = Author.objects.create(name="Ada")
        assert published == []

    assert published == [(f"authors://{author.pk}", default_site._wrapped)]


def create_and_roll_back(name: str) -> None:
    try:
        with transaction.atomic():
            Author.objects.create(name=name)
            raise RuntimeError("roll back")
    except RuntimeError:
        pass


def test_a_rolled_back_save_is_never_announced(published: list[Any]):
    """basic/patterns/subscriptions.mdx: ``resources/updated`` tells clients a resource
    changed; a change that never committed did not happen, so it is never announced."""
    create_and_roll_back("Ghost")

    assert published == []


def test_updates_and_deletes_are_announced_too(published: list[Any]):
    """basic/patterns/subscriptions.mdx: ``resources/updated`` tells the client to re-read;
    a delete changes what the URI serves as much as an update."""
    author = Author.objects.create(name="Ada")
    uri = f"authors://{author.pk}"
    author.name = "Ada L."
    author.save()
    author.delete()

    assert [call[0] for call in published] == [uri, uri, uri]


def test_unwatch_stops_the_announcements(published: list[Any]):
    """basic/patterns/subscriptions.mdx: updates are announced only for resources the server
    still serves; ``unwatch`` disconnects what ``watch`` connected, so later saves publish
    nothing."""
    receiver = watch(Author, uri=lambda author: f"people://{author.pk}")
    Author.objects.create(name="Before")
    unwatch(Author, receiver)
    Author.objects.create(name="After")

    people = [uri for uri, _ in published if uri.startswith("people://")]
    assert len(people) == 1


def test_a_template_uri_is_expanded_percent_encoded_from_the_instance(published: list[Any]):
    """basic/patterns/subscriptions.mdx: the URI announced must be the URI a client reads
    and subscribes to. ``watch(Model, uri="people://{name}")`` expands the template as RFC
    6570 does (section 3.2.2: a simple variable percent-encodes all but unreserved
    characters), so ``AC/DC 100%`` is announced at the URI that names it, and that URI
    matches the template back to the same value."""
    receiver = watch(Author, uri="people://{name}")
    try:
        Author.objects.create(name="AC/DC 100%")
    finally:
        unwatch(Author, receiver)

    people = [uri for uri, _ in published if uri.startswith("people://")]
    assert people == ["people://AC%2FDC%20100%25"]
    assert URITemplate("people://{name}").match(people[0]) == {"name": "AC/DC 100%"}


def test_a_template_uri_the_matcher_cannot_read_is_refused_at_watch_time():
    """A template no client URI could ever match is a mistake to report when the app
    starts, not a silent watcher that announces URIs nobody can subscribe to."""
    with pytest.raises(InvalidTemplate):
        watch(Author, uri="people://{na me}")


def test_unregistering_a_model_stops_its_announcements(published: list[Any]):
    """basic/patterns/subscriptions.mdx, as above: unregistering a ModelTools with
    ``resource_uri`` removes its resource template and
    its watcher, so saves of the model no longer publish for it."""
    site = MCPSite(name="watch-test")

    class ShelfTools(django_mcp.ModelTools):
        fields = ("id", "title")
        resource_uri = "shelf://{id}"

    site.register(Book, ShelfTools)
    author = Author.objects.create(name="Author")
    first = Book.objects.create(isbn="1", title="One", author=author)
    site.unregister(Book)
    Book.objects.create(isbn="2", title="Two", author=author)

    # Primary keys are not reset between tests on PostgreSQL: name the row, not "1".
    assert [uri for uri, _ in published if uri.startswith("shelf://")] == [f"shelf://{first.pk}"]
    assert not site.is_registered("shelf://{id}")


@pytest.mark.usefixtures("streams_urls")
def test_a_listen_stream_receives_the_committed_update_only(client: Client, settings: Any):
    """basic/patterns/subscriptions.mdx: a stream subscribed to the template ``authors://{id}`` gets
    ``resources/updated`` for a committed Author, with its subscriptionId; during the open
    transaction it only sees keep-alives, and a rolled-back save never shows (WSGI path,
    in-memory channel layer)."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_KEEPALIVE_SECONDS": 0.05}
    body = {
        "jsonrpc": "2.0",
        "id": "authors",
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"resourceSubscriptions": ["authors://{id}"]},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    response = client.post(
        "/mcp",
        json.dumps(body),
        content_type="application/json",
        headers={
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "subscriptions/listen",
        },
    )
    frames = iter(response.streaming_content)
    try:
        ack = sse.messages(next(frames))[0]
        assert ack["method"] == "notifications/subscriptions/acknowledged"

        create_and_roll_back("Ghost")
        with transaction.atomic():
            author = Author.objects.create(name="Ada")
            assert next(frames).startswith(b":")  # nothing but a keep-alive before commit

        update = next(frame for frame in frames if not frame.startswith(b":"))
    finally:
        response.close()

    message = sse.messages(update)[0]
    sse.check_message(message)
    assert message["method"] == "notifications/resources/updated"
    assert message["params"]["uri"] == f"authors://{author.pk}"
    assert message["params"]["_meta"][sse.SUBSCRIPTION_ID_KEY] == "authors"


def test_a_change_names_its_row_as_a_value_any_channel_layer_carries():
    """The row travels with the change on the channel layer (msgpack with
    channels_redis): an integer or string key as it is, any other (a UUID) as its string,
    which the field converts back when the listener looks the row up."""
    from uuid import UUID

    key = UUID("12345678-1234-5678-1234-567812345678")
    assert row_of(Author(pk=7)) == {"model": "books.Author", "pk": 7}
    assert row_of(Author(pk=key)) == {"model": "books.Author", "pk": str(key)}


@isolate_apps("tests")
def test_a_composite_key_travels_as_a_list_and_comes_back_as_a_tuple():
    """Django's ``CompositePrimaryKey`` makes ``pk`` a tuple, which msgpack (channels_redis)
    turns into a list: the row names it as a list of carried values, and ``pk_of`` gives
    ``filter(pk=...)`` the tuple back (a list there raised, and the listener withheld the
    change with an exception logged for every event and listener)."""
    from django.db import models

    class Line(models.Model):  # noqa: DJ008
        pk = models.CompositePrimaryKey("order", "number")
        order = models.IntegerField()
        number = models.CharField(max_length=10)

        class Meta:
            app_label = "tests"

    row = row_of(Line(order=7, number="a"))
    assert row == {"model": "tests.Line", "pk": [7, "a"]}
    assert pk_of(row) == (7, "a")
    assert pk_of(row_of(Author(pk=7))) == 7
