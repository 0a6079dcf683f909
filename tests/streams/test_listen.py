"""``subscriptions/listen`` streams through a live Daphne server (uvicorn for the server-side
close), plus the WSGI path in-process.

basic/patterns/subscriptions.mdx: the response is an SSE stream that stays open; the first
message MUST be notifications/subscriptions/acknowledged with the subset honoured; each type
is opt-in, and the server MUST NOT send types the client did not request; every
notification carries ``_meta["io.modelcontextprotocol/subscriptionId"]`` (the listen
request's id); ``:`` comment keep-alives go out during quiet periods; a server that ends the
stream SHOULD first send the JSON-RPC response to the listen request, then close.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

import pytest

from django_mcp.listen.fanout import notify_prompts_changed, notify_tools_changed
from tests.helpers import SERVER_INFO_KEY, assert_error, mcp_post, request_meta

from . import remote, sse
from .conftest import UVICORN_LISTEN_MAX_SECONDS
from .remote import STREAMS, call, change, listening
from .tools_site import site as streams_site

if TYPE_CHECKING:
    from collections.abc import Iterator

    from django.test import Client

    from tests.live import LiveServer

ALL = {
    "toolsListChanged": True,
    "promptsListChanged": True,
    "resourcesListChanged": True,
    "resourceSubscriptions": ["secret://a"],
}


# -- acknowledgement ------------------------------------------------------------------------


@pytest.mark.live
def test_the_acknowledgement_comes_first_with_everything_a_full_site_can_deliver(
    daphne: LiveServer,
):
    """basic/patterns/subscriptions.mdx: the first message is the acknowledgement; a site
    with tools, prompts and resources (listChanged and subscribe) honours every type."""
    with listening(daphne, ALL) as (ack, _):
        assert ack["params"]["notifications"] == ALL


@pytest.mark.live
def test_the_acknowledgement_leaves_out_types_the_server_cannot_deliver(daphne: LiveServer):
    """basic/patterns/subscriptions.mdx: "The acknowledged subset leaves out types the server
    cannot deliver": a tools-only site honours ``toolsListChanged`` alone."""
    with listening(daphne, ALL, path="/streams/tools-only") as (ack, _):
        assert ack["params"]["notifications"] == {"toolsListChanged": True}


@pytest.mark.live
def test_an_empty_filter_is_acknowledged_as_empty(daphne: LiveServer):
    """basic/patterns/subscriptions.mdx: the filter is required, each field optional; flags
    set to false opt into nothing."""
    with listening(daphne, {"toolsListChanged": False}) as (ack, _):
        assert ack["params"]["notifications"] == {}


@pytest.mark.live
@pytest.mark.parametrize("subscription_id", ["listen-7", 42], ids=["string", "integer"])
def test_every_message_carries_the_listen_id_with_its_json_type(
    daphne: LiveServer, subscription_id: Any
):
    """basic/patterns/subscriptions.mdx: "Each is identified by its request id"; the
    subscriptionId is that id, a string or an integer, unchanged."""
    with listening(daphne, {"toolsListChanged": True}, id=subscription_id) as (ack, reader):
        assert type(ack["params"]["_meta"][sse.SUBSCRIPTION_ID_KEY]) is type(subscription_id)
        call(daphne, "notify", {"kind": "tools"})

        note = change(reader, subscription_id)

    assert type(note["params"]["_meta"][sse.SUBSCRIPTION_ID_KEY]) is type(subscription_id)


# -- filtering and delivery -------------------------------------------------------------------


@pytest.mark.live
def test_only_the_types_the_client_opted_into_are_delivered(daphne: LiveServer):
    """basic/patterns/subscriptions.mdx: "The server MUST NOT send types the client did not
    request". Events reach a stream in the order they were published, so the first message
    after the unrequested ones is the requested one."""
    with listening(daphne, {"toolsListChanged": True}) as (_, reader):
        call(daphne, "notify", {"kind": "prompts"})
        call(daphne, "notify", {"kind": "resources"})
        call(daphne, "notify", {"kind": "updated", "uri": "secret://a"})
        call(daphne, "notify", {"kind": "tools"})

        assert change(reader)["method"] == "notifications/tools/list_changed"


@pytest.mark.live
@pytest.mark.parametrize("streamed", [False, True], ids=["json", "sse"])
def test_a_notify_function_called_from_an_async_tool_reaches_listeners(
    daphne: LiveServer, streamed: bool
):
    """basic/patterns/subscriptions.mdx: the ``notify_*`` functions are plain functions;
    called from an ``async def`` tool (whose event loop is running) they publish too, for a
    call answered as JSON and for one streamed with progress."""
    meta = {"progressToken": "n"} if streamed else {}
    with listening(daphne, {"toolsListChanged": True}) as (_, reader):
        body = remote.tool_call("notify_async", **meta)
        response = remote.post(daphne.url(STREAMS), body)
        assert response.status_code == 200
        assert (response.headers["content-type"] == "text/event-stream") is streamed

        assert change(reader)["method"] == "notifications/tools/list_changed"


@pytest.mark.live
@pytest.mark.parametrize(
    ("kind", "method"),
    [
        ("tools", "notifications/tools/list_changed"),
        ("prompts", "notifications/prompts/list_changed"),
        ("resources", "notifications/resources/list_changed"),
    ],
)
def test_each_notify_function_reaches_streams_that_asked_for_it(
    daphne: LiveServer, kind: str, method: str
):
    """basic/patterns/subscriptions.mdx: ``listChanged`` servers SHOULD notify listeners that
    opted in; ``notify_tools_changed`` / ``notify_prompts_changed`` /
    ``notify_resources_changed`` publish to every stream of the site."""
    with listening(daphne, ALL) as (_, reader):
        call(daphne, "notify", {"kind": kind})

        assert change(reader)["method"] == method


@pytest.mark.live
def test_resource_updates_match_a_subscribed_uri_exactly_never_by_prefix(daphne: LiveServer):
    """basic/patterns/subscriptions.mdx: ``resourceSubscriptions`` names "these resource
    URIs"; an update goes to a stream subscribed to that URI. A subscription is not a
    string prefix: ``secret://a`` does not cover ``secret://ab`` nor ``secret://a/part``, and
    ``plain://`` (no declared resource) covers nothing. The later update proves the earlier
    ones were dropped, not late."""
    subscriptions = ["secret://a", "plain://"]
    with listening(daphne, {"resourceSubscriptions": subscriptions}) as (_, reader):
        for uri in ("secret://b", "secret://ab", "secret://a/part", "plain://note", "secret://a"):
            call(daphne, "notify", {"kind": "updated", "uri": uri})

        first = change(reader)

    assert first["method"] == "notifications/resources/updated"
    assert first["params"]["uri"] == "secret://a"


@pytest.mark.live
def test_a_subscribed_resource_template_covers_the_uris_it_matches(daphne: LiveServer):
    """basic/patterns/subscriptions.mdx: "The URI may be a sub-resource of a subscribed
    URI". Subscribing to the declared template ``secret://{name}`` covers each URI that the
    template matches, and nothing else (``plain://note`` is another resource)."""
    with listening(daphne, {"resourceSubscriptions": ["secret://{name}"]}) as (_, reader):
        for uri in ("plain://note", "secret://a/part", "secret://b", "secret://c"):
            call(daphne, "notify", {"kind": "updated", "uri": uri})

        uris = [change(reader)["params"]["uri"], change(reader)["params"]["uri"]]

    assert uris == ["secret://b", "secret://c"]


@pytest.mark.live
def test_registering_and_unregistering_a_tool_at_run_time_announces_the_change(
    daphne: LiveServer,
):
    """server/tools.mdx, "List Changed Notification": when the list of tools changes, the
    server sends ``notifications/tools/list_changed`` to streams that asked for it (once
    the site is serving, i.e. after start-up)."""
    with listening(daphne, {"toolsListChanged": True}) as (_, reader):
        first = call(daphne, "toggle_tool")
        assert change(reader)["method"] == "notifications/tools/list_changed"
        listed = remote.result(daphne.url(STREAMS), remote.message("tools/list"))
        second = call(daphne, "toggle_tool")
        assert change(reader)["method"] == "notifications/tools/list_changed"

    assert {first, second} == {"added", "removed"}
    names = {tool["name"] for tool in listed["tools"]}
    assert ("ephemeral" in names) == (first == "added")


@pytest.mark.live
def test_registering_a_prompt_at_run_time_announces_the_prompt_list_change(daphne: LiveServer):
    """server/prompts.mdx: prompt list changes go to streams with ``promptsListChanged``;
    a stream that asked only for tools sees nothing of it."""
    with (
        listening(daphne, {"promptsListChanged": True}) as (_, prompts),
        listening(daphne, {"toolsListChanged": True}, id="tools") as (_, tools),
    ):
        call(daphne, "toggle_prompt")
        assert change(prompts)["method"] == "notifications/prompts/list_changed"
        call(daphne, "notify", {"kind": "tools"})
        assert change(tools, "tools")["method"] == "notifications/tools/list_changed"
        call(daphne, "toggle_prompt")  # back as it was
        assert change(prompts)["method"] == "notifications/prompts/list_changed"


@pytest.mark.live
def test_an_autodiscovered_site_announces_changes_made_by_a_tool(daphne: LiveServer):
    """basic/patterns/subscriptions.mdx: the default (autodiscovered) site serves listen
    too; testproject.conformance's ``test_trigger_tool_change`` re-registers a tool."""
    with listening(daphne, {"toolsListChanged": True}, path="/mcp") as (_, reader):
        call(daphne, "test_trigger_tool_change", path="/mcp")

        assert change(reader)["method"] == "notifications/tools/list_changed"


@pytest.mark.live
def test_model_tools_saves_reach_a_listener_after_commit_and_never_on_rollback(
    daphne: LiveServer,
):
    """basic/patterns/subscriptions.mdx: ModelTools ``resource_uri = "authors://{id}"``
    (testproject.books) announces a committed save; a rolled-back save (published first)
    never reaches the stream, so the two messages are exactly the two committed saves."""
    authors = {"resourceSubscriptions": ["authors://{id}"]}
    with listening(daphne, authors, path="/mcp") as (_, reader):
        rolled_back = remote.result(
            daphne.url(STREAMS), remote.tool_call("save_author", {"name": "Ghost", "fail": True})
        )
        assert rolled_back["isError"] is True
        ada = call(daphne, "save_author", {"name": "Ada"})
        bob = call(daphne, "save_author", {"name": "Bob"})

        uris = [change(reader)["params"]["uri"], change(reader)["params"]["uri"]]

    assert uris == [f"authors://{ada}", f"authors://{bob}"]


# -- keep-alives, closing, cancellation ---------------------------------------------------------


@pytest.mark.live
def test_quiet_streams_carry_keep_alive_comments(daphne: LiveServer):
    """basic/transports/streamable-http.mdx: for long-lived streams "servers are encouraged to
    periodically emit an SSE comment line" as a keep-alive (``LISTEN_KEEPALIVE_SECONDS``, 0.2 s
    in this server)."""
    with listening(daphne, {"toolsListChanged": True}) as (_, reader):
        frames = [reader.frame(), reader.frame(), reader.frame()]

    assert all(frame.is_comment for frame in frames)
    assert all(frame.raw.startswith(":") for frame in frames)


@pytest.mark.live
def test_the_server_ends_a_stream_with_the_listen_result_then_closes(uvicorn: LiveServer):
    """basic/patterns/subscriptions.mdx: when the server ends the stream (here after
    ``LISTEN_MAX_SECONDS``, 1 s) it "SHOULD first send the JSON-RPC response to the listen
    request, then close": ``{"resultType": "complete", "_meta": {subscriptionId}}``."""
    started = time.monotonic()
    with listening(uvicorn, {"toolsListChanged": True}, id="short") as (_, reader):
        closing = reader.message(deadline=UVICORN_LISTEN_MAX_SECONDS + 5)
        rest = reader.rest()

    sse.check_message(closing, "subscriptions/listen")
    assert closing["id"] == "short"
    assert closing["result"]["resultType"] == "complete"
    assert closing["result"]["_meta"][sse.SUBSCRIPTION_ID_KEY] == "short"
    assert all(frame.is_comment for frame in rest)
    assert time.monotonic() - started >= UVICORN_LISTEN_MAX_SECONDS


@pytest.mark.live
def test_closing_a_listen_stream_removes_its_subscription(daphne: LiveServer):
    """basic/patterns/subscriptions.mdx: "The client closes the stream to cancel" and "The
    server keeps no subscription state beyond the open stream"."""
    before = call(daphne, "listeners")
    with listening(daphne, {"toolsListChanged": True}):
        assert call(daphne, "listeners") == before + 1

    deadline = time.monotonic() + 5
    while call(daphne, "listeners") != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert call(daphne, "listeners") == before


# -- in-process (WSGI) ------------------------------------------------------------------------


def post_listen(client: Client, notifications: Any, **kw: Any) -> Any:
    params = {} if notifications is None else {"notifications": notifications}
    return mcp_post(client, "subscriptions/listen", params, id="wsgi", path=STREAMS, **kw)


@pytest.mark.usefixtures("streams_urls")
@pytest.mark.parametrize(
    "notifications",
    [None, [], "all", {"toolsListChanged": "yes"}, {"resourceSubscriptions": "secret://a"}],
    ids=repr,
)
def test_a_malformed_filter_is_invalid_params_before_any_stream(client: Client, notifications: Any):
    """basic/patterns/subscriptions.mdx: ``notifications`` is required and typed; a bad
    filter is an ordinary JSON-RPC error (-32602), validated before a stream opens (our
    choice: an HTTP status can only be chosen before a stream starts)."""
    response = post_listen(client, notifications)

    assert response["Content-Type"].startswith("application/json")
    assert_error(response, 200, -32602)


@pytest.mark.django_db
@pytest.mark.usefixtures("streams_urls")
@pytest.mark.parametrize("declared", [False, True], ids=["undeclared", "declared"])
def test_task_ids_are_left_out_where_the_tasks_extension_is_not_offered(
    client: Client, declared: bool
):
    """basic/patterns/subscriptions.mdx and the schema's acknowledgement: the subset honoured
    "Only includes notification types the server actually supports; if the client requested
    an unsupported type [...], it is omitted from this set". ``taskIds`` belongs to the Tasks
    extension, which this site (no task tools) does not offer: the stream opens without it,
    never refused with -32021 for an extension the server could not use anyway."""
    capabilities = {"extensions": {"io.modelcontextprotocol/tasks": {}}} if declared else {}
    response = post_listen(
        client,
        {"toolsListChanged": True, "taskIds": ["abc"]},
        meta=request_meta(capabilities=capabilities),
    )

    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    ack = sse.parse(next(iter(response.streaming_content)))[0].message
    response.close()
    assert ack["params"]["notifications"] == {"toolsListChanged": True}


def read_until_closed(chunks: Iterator[bytes], within: float) -> list[sse.Frame]:
    frames: list[sse.Frame] = []
    deadline = time.monotonic() + within
    for chunk in chunks:
        frames.extend(sse.parse(chunk))
        assert time.monotonic() < deadline, "the stream did not end in time"
    return frames


@pytest.mark.usefixtures("streams_urls")
def test_the_wsgi_path_acknowledges_delivers_keeps_alive_and_closes(client: Client, settings: Any):
    """basic/patterns/subscriptions.mdx, through a WSGI worker (one thread per stream): the
    same acknowledgement, filtered changes, keep-alives and closing result."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": 0.1,
        "LISTEN_MAX_SECONDS": 0.6,
    }
    response = post_listen(client, {"toolsListChanged": True})
    assert response["Content-Type"] == "text/event-stream"
    assert response["X-Accel-Buffering"] == "no"
    chunks = iter(response.streaming_content)
    ack = sse.parse(next(chunks))  # the stream is subscribed once it acknowledged
    notify_prompts_changed(site=streams_site)  # filtered out
    notify_tools_changed(site=streams_site)

    frames = ack + read_until_closed(chunks, within=5)

    messages = [frame.message for frame in frames if frame.message]
    for message in messages[:-1]:
        sse.check_message(message)
    sse.check_message(messages[-1], "subscriptions/listen")
    assert [m.get("method") for m in messages] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        None,
    ]
    assert messages[-1]["id"] == "wsgi"
    assert any(frame.is_comment for frame in frames)


@pytest.mark.usefixtures("streams_urls")
@pytest.mark.parametrize("included", [True, False], ids=["server-info", "configured-off"])
def test_the_closing_result_carries_server_info_like_every_result(
    client: Client, settings: Any, included: bool
):
    """schema ``SubscriptionsListenResultMetaObject``: the closing result's ``_meta`` has the
    subscriptionId and ``io.modelcontextprotocol/serverInfo``, which "Servers SHOULD include
    [...] on every response unless specifically configured not to" (``INCLUDE_SERVER_INFO``)."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_MAX_SECONDS": 0.3,
        "INCLUDE_SERVER_INFO": included,
    }
    response = post_listen(client, {"toolsListChanged": True})
    frames = read_until_closed(iter(response.streaming_content), within=5)

    closing = [frame.message for frame in frames if frame.message][-1]
    sse.check_message(closing, "subscriptions/listen")
    meta = closing["result"]["_meta"]
    assert meta[sse.SUBSCRIPTION_ID_KEY] == "wsgi"
    if included:
        assert set(meta[SERVER_INFO_KEY]) >= {"name", "version"}
    else:
        assert SERVER_INFO_KEY not in meta


@pytest.mark.usefixtures("streams_urls")
def test_events_a_stream_filters_out_do_not_hold_back_its_keep_alives(
    client: Client, settings: Any
):
    """basic/transports/streamable-http.mdx: keep-alives go out "during quiet
    periods" of the stream; a steady flow of events this stream does not want (prompt
    changes, every 20 ms) is quiet for it."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": 0.2,
        "LISTEN_MAX_SECONDS": 1.5,
    }
    response = post_listen(client, {"toolsListChanged": True})
    chunks = iter(response.streaming_content)
    ack = sse.parse(next(chunks))
    stop = threading.Event()

    def flood() -> None:
        while not stop.wait(0.02):
            notify_prompts_changed(site=streams_site)

    flooder = threading.Thread(target=flood, daemon=True)
    flooder.start()
    try:
        frames = ack + read_until_closed(chunks, within=5)
    finally:
        stop.set()
        flooder.join(timeout=5)

    assert sum(frame.is_comment for frame in frames) >= 2
    assert [json.dumps(f.message) for f in frames if f.message and "method" in f.message] == [
        json.dumps(frames[0].message)
    ]


@pytest.mark.usefixtures("streams_urls")
@pytest.mark.parametrize(
    "accept", ["application/json", "application/json, text/event-stream;q=0", "text/html"]
)
def test_listen_is_never_streamed_to_a_client_whose_accept_leaves_sse_out(
    client: Client, accept: str
):
    """basic/transports/streamable-http.mdx has clients accept both; a client that said it
    takes JSON only is answered with a JSON-RPC error (-32600, HTTP 400) before any
    stream, never sent a text/event-stream it refused."""
    response = post_listen(client, {"toolsListChanged": True}, headers={"Accept": accept})

    assert response["Content-Type"].startswith("application/json")
    error = assert_error(response, 400, -32600)
    assert "Accept" in error["message"]


@pytest.mark.usefixtures("streams_urls")
def test_listen_without_an_accept_header_still_streams(client: Client):
    """No ``Accept`` at all refuses nothing (RFC 9110): the lenient reading."""
    response = post_listen(client, {"toolsListChanged": True}, headers={"Accept": None})

    assert response["Content-Type"] == "text/event-stream"
    response.slot.release()


@pytest.mark.django_db
@pytest.mark.usefixtures("streams_urls")
def test_a_stream_ends_when_its_callers_token_expires(
    client: Client, settings: Any, django_user_model: Any
):
    """basic/patterns/subscriptions.mdx: a stream is authorised once, when it opens, so it
    must not outlive the credential that opened it: a token expiring in one second ends a
    stream whose ``LISTEN_MAX_SECONDS`` is 60, with the closing result ("SHOULD first send
    the JSON-RPC response to the listen request, then close"), and the client signs in
    again to listen on."""
    import datetime

    from django.utils import timezone

    from django_mcp.auth.models import AccessToken

    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": 0.1,
        "LISTEN_MAX_SECONDS": 60,
    }
    user = django_user_model.objects.create_user("listener")
    # Read before the expiry is set: the time taken to issue the token counts towards the
    # second (else a slow issue left the stream less than the 0.5 s asserted below).
    started = time.monotonic()
    expires = timezone.now() + datetime.timedelta(seconds=1)
    _, token = AccessToken.objects.issue(user, expires_at=expires)
    response = post_listen(
        client, {"toolsListChanged": True}, headers={"Authorization": f"Bearer {token}"}
    )
    assert response["Content-Type"] == "text/event-stream"

    frames = read_until_closed(iter(response.streaming_content), within=10)

    messages = [frame.message for frame in frames if frame.message]
    assert messages[-1] == sse.closing("wsgi")
    assert 0.5 <= time.monotonic() - started < 10
