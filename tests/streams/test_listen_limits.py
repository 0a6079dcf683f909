"""Listen streams are bounded: a per-process and a per-caller limit, a WSGI limit, a
lifetime, and no database connection held while a stream waits.

basic/patterns/subscriptions.mdx: a listen stream stays open until the client leaves or the
server ends it, first sending the listen request's result. A stream the server cannot hold
is refused before it opens (basic/transports/streamable-http.mdx: errors chosen before a
stream starts keep their HTTP status), with HTTP 429 (this caller holds too many) or 503
(the server holds too many), ``Retry-After`` (RFC 9110 section 10.2.3) and a JSON-RPC error
whose code is application-defined, outside -32768..-32000 (basic/index.mdx, "Error
codes"). The in-process tests run the WSGI path as a threaded worker (see conftest).
"""

from __future__ import annotations

import gc
import io
import json
import threading
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import AnonymousUser, User
from django.core.checks import run_checks
from django.db import connections
from django.test import Client

from django_mcp.listen import limits
from django_mcp.protocol.admission import Admitted
from django_mcp.server.dispatch import MCPServer
from django_mcp.stdio.inflight import Call
from django_mcp.stdio.transport import StdioServer
from django_mcp.test import AsyncMCPClient
from tests.helpers import assert_error, mcp_body, mcp_post, result_of

from . import sse
from .forking import fork_while_held
from .remote import STREAMS
from .test_listen import post_listen

pytestmark = pytest.mark.usefixtures("streams_urls")
TOOLS = {"toolsListChanged": True}


def assert_refused(response: Any, status: int, limit: str) -> None:
    assert_error(response, status, -31000)
    assert response.json()["error"]["data"] == {"limit": limit}
    assert response["Retry-After"] == str(limits.RETRY_AFTER_SECONDS)


@pytest.fixture
def held() -> Any:
    """Streams a test opens; each is given back at the end, as a server closing it would."""
    streams: list[Any] = []
    yield streams
    for response in streams:
        response.slot.release()


def test_a_caller_over_its_limit_is_refused_with_429_while_others_still_listen(
    client: Client, settings: Any, held: list[Any], db: None
):
    """Two anonymous streams from one address are its limit; a third is refused (429).
    Another caller, a signed-in user, still gets a stream."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_STREAMS_PER_CALLER": 2}
    held += [post_listen(client, TOOLS), post_listen(client, TOOLS)]
    assert [r["Content-Type"] for r in held] == ["text/event-stream"] * 2

    assert_refused(post_listen(client, TOOLS), 429, "caller")

    signed_in = Client(**{"wsgi.multithread": True})
    signed_in.force_login(User.objects.create_user("listener"))
    held.append(post_listen(signed_in, TOOLS))
    assert held[-1]["Content-Type"] == "text/event-stream"


def test_anonymous_streams_are_counted_by_the_address_the_rate_limits_use(
    client: Client, settings: Any, held: list[Any], db: None
):
    """Behind ``TRUSTED_PROXY_HOPS`` proxies, anonymous streams were counted by
    ``REMOTE_ADDR``, the proxy's: one client holding its streams shut every other
    anonymous client out (429). They are now counted by the client address the rate
    limits use, an IPv6 one by its ``IPV6_PREFIX`` network (basic/patterns/subscriptions.mdx
    leaves the limits to the server; these are django-mcp's)."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_MAX_STREAMS_PER_CALLER": 1,
        "TRUSTED_PROXY_HOPS": 1,
    }
    proxy = {"REMOTE_ADDR": "10.0.0.1"}
    held.append(post_listen(client, TOOLS, HTTP_X_FORWARDED_FOR="192.0.2.7", **proxy))
    held.append(post_listen(client, TOOLS, HTTP_X_FORWARDED_FOR="192.0.2.8", **proxy))
    assert [r["Content-Type"] for r in held] == ["text/event-stream"] * 2
    assert_refused(
        post_listen(client, TOOLS, HTTP_X_FORWARDED_FOR="192.0.2.7", **proxy), 429, "caller"
    )
    held.append(post_listen(client, TOOLS, HTTP_X_FORWARDED_FOR="2001:db8:1:2::1", **proxy))
    assert held[-1]["Content-Type"] == "text/event-stream"
    assert_refused(
        post_listen(client, TOOLS, HTTP_X_FORWARDED_FOR="2001:db8:1:2::99", **proxy),
        429,
        "caller",
    )


def test_the_process_limit_refuses_any_caller_with_503(
    client: Client, settings: Any, held: list[Any]
):
    """``LISTEN_MAX_STREAMS`` counts every caller of the process."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_STREAMS": 1}
    held.append(post_listen(client, TOOLS, REMOTE_ADDR="192.0.2.1"))
    assert held[0]["Content-Type"] == "text/event-stream"

    assert_refused(post_listen(client, TOOLS, REMOTE_ADDR="192.0.2.2"), 503, "process")


def test_a_closed_stream_gives_its_place_back(client: Client, settings: Any, db: None):
    """Closing the response (what a server does when the stream ends) frees the slot."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_STREAMS_PER_CALLER": 1}
    first = post_listen(client, TOOLS)
    assert limits.open_streams() == 1
    first.close()
    assert limits.open_streams() == 0

    again = post_listen(client, TOOLS)
    assert again["Content-Type"] == "text/event-stream"
    again.close()


def test_a_stream_freed_inside_the_counts_critical_section_does_not_deadlock(
    client: Client, monkeypatch: pytest.MonkeyPatch, db: None
):
    """A stream's response that nobody closed gives its slot back when it is freed, often
    by the cyclic garbage collector, which runs wherever an allocation triggers it: on any
    thread, even one that holds the stream counts' lock at that moment. Waiting for the
    lock there waits for ever, and every later listen stream of the process with it (a
    live Daphne once stopped opening listen streams in CI this way). The lock here is a
    fresh one, so that a regression fails this test without hanging the ones after it."""
    monkeypatch.setattr(limits, "_lock", threading.Lock())
    responses = [post_listen(client, TOOLS)]
    assert limits.open_streams() == 1

    def free_inside_the_lock() -> None:
        with limits._lock:
            responses.clear()
            gc.collect()

    worker = threading.Thread(target=free_inside_the_lock, daemon=True)
    worker.start()
    worker.join(5)

    assert not worker.is_alive(), "freeing a stream inside the counts' lock deadlocked"
    assert limits.open_streams() == 0


def test_a_forked_child_starts_with_counts_of_its_own(client: Client, db: None):
    """A process forked while another thread held the counts' lock (a server forking
    workers after it served a stream) must not wait for that lock for ever, nor count the
    parent's streams, nor go below zero when a slot of the parent's is given back."""
    inherited = post_listen(client, TOOLS)
    assert limits.open_streams() == 1

    def child() -> bool:
        inherited.slot.release()
        return limits.open_streams() == 0

    try:
        status = fork_while_held(limits._lock, child)
    finally:
        inherited.close()

    assert status == 0, "the child hung on the parent's lock" if status is None else status
    assert limits.open_streams() == 0


def test_a_stream_that_fails_to_start_gives_its_place_back(
    client: Client, monkeypatch: pytest.MonkeyPatch, db: None
):
    """A failure after the slot is taken and before the stream exists (here: closing the
    view's database connections) must not keep the place: no stream would ever end to
    give it back, and the caller would be refused for good once at its limit."""

    def broken() -> None:
        raise RuntimeError("the connection would not close")

    monkeypatch.setattr(limits, "release_connections", broken)
    with pytest.raises(RuntimeError, match="would not close"):
        post_listen(client, TOOLS)

    assert limits.open_streams() == 0


def test_a_single_threaded_wsgi_worker_refuses_listen(settings: Any):
    """A worker serving one request at a time (gunicorn sync: ``wsgi.multithread`` false)
    would be held whole by a stream: refused (503), whatever ``LISTEN_WSGI_STREAMS`` says."""
    assert_refused(post_listen(Client(), TOOLS), 503, "wsgi-single-threaded")


def test_listen_under_wsgi_is_refused_by_default(client: Client, settings: Any):
    """``LISTEN_WSGI_STREAMS`` is 0 by default: serve listen from ASGI."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": 0}
    assert_refused(post_listen(client, TOOLS), 503, "wsgi")


def offered_notifications(client: Client) -> dict[str, Any]:
    """What ``server/discover`` offers of the notification capabilities."""
    discovered = mcp_post(client, "server/discover", path=STREAMS)
    capabilities = result_of(discovered)["capabilities"]
    return {name: capabilities.get(name) for name in ("tools", "resources", "prompts")}


NOTIFYING = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
}
SILENT = {"tools": {}, "resources": {}, "prompts": {}}


def test_discover_offers_notifications_only_where_listen_can_be_served(
    client: Client, settings: Any
):
    """basic/patterns/subscriptions.mdx: ``listChanged`` and ``subscribe`` promise
    notifications that only a listen stream carries. Where this server refuses every
    stream (a single-threaded worker; ``LISTEN_WSGI_STREAMS`` 0) discover leaves them out;
    a threaded worker allowed streams offers them, as ASGI does (tests/test_mcp_client)."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": 2}
    assert offered_notifications(client) == NOTIFYING
    assert offered_notifications(Client()) == SILENT  # wsgi.multithread false
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": 0}
    assert offered_notifications(client) == SILENT


@pytest.mark.parametrize("transport", ["asgi", "stdio"])
def test_asgi_and_stdio_offer_notifications_whatever_the_wsgi_setting(
    transport: str, mcp_site: Any, settings: Any, db: None
):
    """Both hold listen streams whatever ``LISTEN_WSGI_STREAMS`` says (0 by default), so
    their discover results offer every notification flag: only WSGI workers are judged by
    it (stdio's requests are built by the transport, neither WSGI's nor ASGI's)."""

    @mcp_site.tool
    def tool() -> str:
        return "x"

    @mcp_site.prompt
    def prompt() -> str:
        return "x"

    @mcp_site.resource("notes://about")
    def about() -> str:
        return "x"

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": 0}
    if transport == "asgi":
        capabilities = async_to_sync(AsyncMCPClient(site=mcp_site).discover)().capabilities
    else:
        server = MCPServer(mcp_site)
        out = io.BytesIO()
        stdio = StdioServer(server, out, user=AnonymousUser())
        body = json.dumps(mcp_body("server/discover", {}, id=1)).encode()
        admitted = server.admit(body, None, request=stdio.request)
        assert isinstance(admitted, Admitted)
        stdio.run(admitted, Call(admitted.request.id))
        capabilities = json.loads(out.getvalue().splitlines()[0])["result"]["capabilities"]
    assert {name: capabilities[name] for name in NOTIFYING} == NOTIFYING


@pytest.mark.parametrize("value", [None, "two", -1])
def test_a_bad_wsgi_streams_setting_refuses_listen_and_keeps_discover_answering(
    client: Client, settings: Any, value: Any
):
    """A value the checks refuse (E-level, which a server start does not run) counts as 0:
    discover, the first call of every client, still answers, and listen is refused."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": value}
    assert offered_notifications(client) == SILENT
    assert_refused(post_listen(client, TOOLS), 503, "wsgi")


@pytest.mark.django_db(transaction=True)
def test_a_waiting_stream_holds_no_database_connection(client: Client):
    """The signed-in caller's session was read from the database by the view; once the
    stream is open and waiting, this thread (the worker's) holds no connection. (An
    in-memory SQLite database cannot be closed without losing it: PostgreSQL run only.)"""
    if getattr(connections["default"], "is_in_memory_db", lambda: False)():
        pytest.skip("an in-memory SQLite connection is never closed")
    client.force_login(User.objects.create_user("idle"))
    response = post_listen(client, TOOLS)
    chunks = iter(response.streaming_content)
    try:
        [ack] = sse.parse(next(chunks))
        assert ack.message is not None

        assert connections["default"].connection is None
    finally:
        response.close()


def test_an_unbounded_lifetime_is_refused_by_the_checks(settings: Any):
    """``LISTEN_MAX_SECONDS = None`` is an error (E004); a stream still ends, after the
    default lifetime."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_SECONDS": None}
    ids = {message.id for message in run_checks()}

    assert "django_mcp.E004" in ids
    assert limits.max_seconds() == 300.0


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1, 0])
def test_a_lifetime_the_checks_refuse_means_the_default(settings: Any, value: float):
    """A process that never ran the checks (E004) still ends every stream: NaN compared as
    positive-or-not slipped through, and infinity never ends (nor can a thread wait it)."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_SECONDS": value}
    assert limits.max_seconds() == 300.0


@pytest.mark.parametrize(
    "name", ["LISTEN_KEEPALIVE_SECONDS", "LISTEN_RECHECK_SECONDS", "PROGRESS_INTERVAL"]
)
def test_no_interval_is_a_wait_no_thread_can_take(settings: Any, name: str):
    """``mcp_settings.number`` refuses infinity and anything past threading.TIMEOUT_MAX
    (``queue.get(timeout=inf)`` raises OverflowError in the stream's thread)."""
    from django_mcp.conf import DEFAULTS, mcp_settings

    for value in (float("inf"), threading.TIMEOUT_MAX * 2):
        settings.DJANGO_MCP = {**settings.DJANGO_MCP, name: value}
        assert mcp_settings.number(name, at_least=0) == DEFAULTS[name]


def test_a_stream_count_past_the_longest_wait_is_still_the_count(settings: Any):
    """E004 takes any positive integer for a stream limit, and a count is never waited
    for: ``number`` bounded it by threading.TIMEOUT_MAX too (about 4.3 million on
    Windows), so a larger limit the checks accepted silently became the default."""
    from unittest import mock

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_STREAMS": 5_000_000}
    with mock.patch.object(threading, "TIMEOUT_MAX", 4_294_967.0):
        assert "django_mcp.E004" not in {message.id for message in run_checks()}
        assert limits.max_streams() == 5_000_000


def test_listen_under_wsgi_is_reported_by_a_warning(settings: Any):
    """django_mcp.W013: enabling listen under WSGI says what each stream costs."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": 2}
    assert "django_mcp.W013" in {message.id for message in run_checks()}
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": 0}
    assert "django_mcp.W013" not in {message.id for message in run_checks()}


def test_each_token_user_has_a_cap_of_their_own(
    client: Client, settings: Any, held: list[Any], db: None
):
    """The per-caller count is keyed by the request's resolved Caller (``user:<pk>``), so
    two token users from one address each get ``LISTEN_MAX_STREAMS_PER_CALLER`` streams,
    and the third stream of either is refused (429)."""
    from django_mcp.auth.models import AccessToken

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_STREAMS_PER_CALLER": 1}
    tokens = [
        AccessToken.objects.issue(User.objects.create_user(name))[1] for name in ("ann", "bob")
    ]
    for token in tokens:
        held.append(post_listen(client, TOOLS, headers={"Authorization": f"Bearer {token}"}))
        assert held[-1]["Content-Type"] == "text/event-stream", held[-1].content
    again = post_listen(client, TOOLS, headers={"Authorization": f"Bearer {tokens[0]}"})
    assert_refused(again, 429, "caller")


def test_the_caller_key_is_the_resolved_caller_never_request_user_alone(rf: Any) -> None:
    """With no caller resolved (the database was down while authenticating) the stream is
    counted by address, and ``request.user`` (lazy, perhaps a query) is never read."""
    from django.contrib.auth.models import AnonymousUser

    from django_mcp.auth import resolve
    from django_mcp.auth.caller import Caller

    class Unreadable:
        @property
        def is_authenticated(self) -> bool:
            raise AssertionError("request.user was read")

    request = rf.post("/mcp", REMOTE_ADDR="192.0.2.7")
    request.user = Unreadable()
    assert limits.caller_key(request) == "ip:192.0.2.7"

    user = User(pk=41, username="ann")
    resolve.attach(request, Caller(user=user, scopes=frozenset(), method="token"))
    assert limits.caller_key(request) == "user:41"
    resolve.attach(request, Caller(user=AnonymousUser(), scopes=frozenset({"x"})))
    assert limits.caller_key(request) == "ip:192.0.2.7"  # a token acting for no user


@pytest.mark.parametrize("value", [0, -1, None], ids=repr)
def test_a_keep_alive_interval_the_checks_refuse_means_the_default(
    client: Client, settings: Any, db: None, value: Any
):
    """``LISTEN_KEEPALIVE_SECONDS`` must be positive (django_mcp.E004), but ASGI and WSGI
    servers run no system checks. 0 (or less) made every stream, which any client may
    open, write keep-alives in a busy loop (basic/patterns/subscriptions.mdx asks for them
    "during quiet periods"), and None broke every stream as it opened; such a value now
    means the default (15 s), as ``LISTEN_RECHECK_SECONDS`` already did."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": value,
        "LISTEN_MAX_SECONDS": 0.3,
    }
    response = post_listen(client, TOOLS)
    frames = [frame for chunk in response.streaming_content for frame in sse.parse(chunk)]
    response.close()

    messages = [frame.message for frame in frames if frame.message]
    assert [message.get("method") for message in messages] == [
        "notifications/subscriptions/acknowledged",
        None,  # the closing result, at LISTEN_MAX_SECONDS
    ]
    assert not any(frame.is_comment for frame in frames)


@pytest.mark.parametrize("key", ["LISTEN_MAX_STREAMS", "LISTEN_MAX_STREAMS_PER_CALLER"])
@pytest.mark.parametrize("value", [None, 0, 2.5], ids=repr)
def test_a_stream_limit_the_checks_refuse_means_the_default(
    client: Client, settings: Any, db: None, key: str, value: Any
):
    """E004 refuses these limits unless they are positive integers; in a server that ran
    no checks such a value now means the default, never a 500 (None) or every stream
    refused (0)."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, key: value}
    response = post_listen(client, TOOLS)
    try:
        assert response.status_code == 200
        assert response["Content-Type"] == "text/event-stream"
    finally:
        response.close()
