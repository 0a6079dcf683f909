"""A listen stream decides with its caller as re-read at each recheck.

basic/authorization.mdx: every request is authorised anew, and a stream is one request that
lasts; basic/patterns/subscriptions.mdx: ``notifications/resources/updated`` goes to a
stream only for what its caller may read (as ``resources/read`` decides). So each
``LISTEN_RECHECK_SECONDS`` the stream re-reads its caller (``revocation.current``): a fresh
instance of the user, whose permissions Django's backends would otherwise answer from the
cache on the instance the stream opened with, and its token's scopes and expiry as they are
now. Taking a permission or a scope away stops the updates it gated; granting one lets
them through; an expiry brought forward ends the stream with its closing result
(subscriptions.mdx, "Graceful closure").

Each check publishes the gated update first and an ungated one (``plain://note``) after it:
the first message tells whether the gated one was delivered. The in-process WSGI path: the
stream's loop runs when the test reads it, so a recheck that is due runs before the events
published while the test slept are rendered.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import Permission, User
from django.utils import timezone

from django_mcp.auth.models import AccessToken
from django_mcp.listen.fanout import notify_resource_updated
from tests.stateless_users import stateless_bearer, stateless_settings

from . import sse
from .test_listen import post_listen

# ``_recheck_often``: that module's autouse settings (RECHECK), imported so they apply here.
from .test_listen_recheck import (  # noqa: F401
    RECHECK,
    _recheck_often,
    closing,
    listen_withdrawn,
    messages_of,
)
from .tools_site import site as streams_site

if TYPE_CHECKING:
    from django.test import Client

pytestmark = [
    pytest.mark.usefixtures("streams_urls"),
    pytest.mark.django_db(transaction=True),  # the recheck queries from a worker thread
]


def first_uris(
    client: Client,
    gated: str,
    change: Callable[[], None],
    headers: dict[str, str] | None = None,
) -> tuple[str, str]:
    """Open a stream subscribed to ``gated`` and ``plain://note``; publish both and take
    the first update; ``change`` the caller, let a recheck fall due, publish both again;
    the URIs of the first update before and after."""
    response = post_listen(
        client, {"resourceSubscriptions": [gated, "plain://note"]}, headers=headers or {}
    )
    assert response["Content-Type"] == "text/event-stream", response.content
    chunks = iter(response.streaming_content)
    try:
        next(chunks)  # the acknowledgement
        before = publish_both(chunks, gated)
        change()
        time.sleep(RECHECK * 3)  # due: the stream asks before it renders the next events
        after = publish_both(chunks, gated)
    finally:
        response.close()
    return before, after


def publish_both(chunks: Iterator[bytes], gated: str) -> str:
    """Publish ``gated`` then ``plain://note``; the URI of the first update delivered,
    after which the rest (``plain://note``, when ``gated`` came first) is read too."""
    notify_resource_updated(gated, site=streams_site)
    notify_resource_updated("plain://note", site=streams_site)
    updates = messages_of(chunks, lambda m: m.get("params", {}).get("uri") == "plain://note")
    uris = [m["params"]["uri"] for m in updates if m.get("method", "").endswith("updated")]
    assert uris[-1] == "plain://note", updates
    return str(uris[0])


@pytest.fixture
def dot_token(settings: Any) -> Callable[..., Any]:
    """django-oauth-toolkit's authenticator configured; its ``make_token`` (a DOT access
    token for a user)."""
    pytest.importorskip("oauth2_provider")
    from tests.oauth.test_dot import RESOURCE, make_token

    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "AUTHENTICATORS": ["django_mcp.auth.oauth.dot.DOTAuthenticator"],
        "OAUTH": {"RESOURCE": RESOURCE},
    }
    return make_token


def signed_in(client: Client, username: str, *permissions: Permission) -> User:
    """A new user holding ``permissions``, signed in on ``client`` (a session caller)."""
    user = User.objects.create_user(username)
    user.user_permissions.add(*permissions)
    client.force_login(user)
    return user


@pytest.fixture
def view_author() -> Permission:
    return Permission.objects.get(codename="view_author")


def test_taking_the_permission_away_stops_the_updates_it_gated(
    client: Client, view_author: Permission
):
    """``staff://{name}`` needs ``books.view_author``: once it is taken away, the next
    request's ``resources/read`` would be refused, and the stream stops hearing of it."""
    user = signed_in(client, "reader", view_author)

    before, after = first_uris(
        client, "staff://x", lambda: user.user_permissions.remove(view_author)
    )

    assert (before, after) == ("staff://x", "plain://note")


def test_granting_the_permission_lets_its_updates_through(client: Client, view_author: Permission):
    """The other way: a permission granted while the stream is open is heard of at the
    next recheck, without listening again."""
    user = signed_in(client, "newcomer")

    before, after = first_uris(client, "staff://x", lambda: user.user_permissions.add(view_author))

    assert (before, after) == ("plain://note", "staff://x")


def test_narrowing_the_tokens_scopes_stops_the_updates_they_gated(client: Client):
    """``scoped://{name}`` needs ``notes:read``; the token's scopes are narrowed to
    ``books:read`` (in code: this site's admin keeps an issued token read-only): the
    token would now get 403 ``insufficient_scope`` from ``resources/read`` (ADR 0005),
    and its stream stops hearing of the resource."""
    row, token = AccessToken.objects.issue(User.objects.create_user("scoped"), scopes="notes:read")

    def narrow() -> None:
        row.scopes = "books:read"
        row.save(update_fields=["scopes"])

    before, after = first_uris(
        client, "scoped://x", narrow, headers={"Authorization": f"Bearer {token}"}
    )

    assert (before, after) == ("scoped://x", "plain://note")


def test_bringing_the_tokens_expiry_forward_ends_the_stream(client: Client):
    """The stream ends when its credential expires (``Listener.deadline``); an expiry
    brought forward to the past (in code, as above) ends it at the next recheck, with its closing
    result, instead of when the stream opened with no expiry."""
    row, token = AccessToken.objects.issue(User.objects.create_user("expiring"))

    def expire() -> None:
        row.expires_at = timezone.now() - datetime.timedelta(seconds=1)
        row.save(update_fields=["expires_at"])

    assert listen_withdrawn(client, token, expire) == [closing("wsgi")]


def test_a_token_that_now_acts_for_another_user_ends_the_stream(client: Client):
    """The token's next request would act as the other user: the stream, opened for the
    first, must not go on deciding as them (nor as the other, which it never was)."""
    row, token = AccessToken.objects.issue(User.objects.create_user("first-holder"))

    def hand_over() -> None:
        row.user = User.objects.create_user("second-holder")
        row.save(update_fields=["user"])

    assert listen_withdrawn(client, token, hand_over) == [closing("wsgi")]


def test_a_django_oauth_toolkit_token_given_to_another_user_ends_the_stream(
    client: Client, dot_token: Callable[..., Any]
):
    """DOT's admin lets a token's user be changed (or cleared)."""
    access_token = dot_token(User.objects.create_user("dot-first"))

    def hand_over() -> None:
        access_token.user = User.objects.create_user("dot-second")
        access_token.save(update_fields=["user"])

    assert listen_withdrawn(client, access_token.token, hand_over) == [closing("wsgi")]


def test_a_django_oauth_toolkit_tokens_expiry_brought_forward_ends_the_stream(
    client: Client, dot_token: Callable[..., Any]
):
    """The same for a django-oauth-toolkit token (``dot:<pk>``), read from DOT's table."""
    access_token = dot_token(User.objects.create_user("dot-expiring"))

    def expire() -> None:
        access_token.expires = timezone.now() - datetime.timedelta(seconds=1)
        access_token.save(update_fields=["expires"])

    assert listen_withdrawn(client, access_token.token, expire) == [closing("wsgi")]


def test_a_django_oauth_toolkit_tokens_scopes_are_read_again(
    client: Client, dot_token: Callable[..., Any]
):
    """DOT's ``scope`` column, narrowed while the stream is open, is read as the
    authenticator reads it."""
    access_token = dot_token(User.objects.create_user("dot-scoped"), scope="mcp notes:read")

    def narrow() -> None:
        access_token.scope = "mcp"
        access_token.save(update_fields=["scope"])

    before, after = first_uris(
        client,
        "scoped://x",
        narrow,
        headers={"Authorization": f"Bearer {access_token.token}"},
    )

    assert (before, after) == ("scoped://x", "plain://note")


class ExpiringRecheck:
    """A recheck that passes when the loop first asks, then, asked again before the event
    it just received is rendered, re-reads a caller whose expiry was brought forward."""

    def __init__(self, caller: Any, adopt: Callable[[Any], None]) -> None:
        self.caller, self.adopt, self.due, self.asked = caller, adopt, float("inf"), 0

    async def allowed(self) -> bool:
        self.asked += 1
        if self.asked == 2:
            self.caller = dataclasses.replace(self.caller, expires_at=time.time() - 1)
            self.adopt(self.caller)
        return True


def test_an_event_the_recheck_meets_past_a_new_expiry_is_not_delivered(
    monkeypatch: pytest.MonkeyPatch, settings: Any
):
    """The answer that comes due as an event arrives is read before the event is
    rendered: when it brought the expiry forward to the past, the stream ends with its
    closing result and the event is not delivered (the deterministic form of a race the
    in-process tests cannot time: the loop's wake-ups otherwise ask first)."""
    from django.contrib.auth.models import AnonymousUser

    from django_mcp.auth.caller import Caller
    from django_mcp.listen import listener as listener_module
    from django_mcp.listen.listener import Listener
    from django_mcp.protocol import subscriptions as proto
    from django_mcp.server.dispatch import MCPServer
    from django_mcp.sites import MCPSite

    from .test_listen_layer_failures import TOOLS_CHANGED, FlakyLayer, first_frames

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_KEEPALIVE_SECONDS": 60}
    context = SimpleNamespace(caller=Caller(user=AnonymousUser(), credential="token:1"))
    context.reidentify = lambda caller: setattr(context, "caller", caller)
    site = MCPSite("expiring")
    wanted = proto.SubscriptionFilter(tools_list_changed=True)
    info = MCPServer(site).server_info()  # what open_listen gives a stream
    stream = Listener(site, "listen-1", wanted, context, server_info=info)
    monkeypatch.setattr(listener_module, "Recheck", ExpiringRecheck)
    monkeypatch.setattr(listener_module, "channel_layer", lambda: FlakyLayer([], TOOLS_CHANGED))

    frames = asyncio.run(first_frames(stream, 3, within=10))

    messages = [m for frame in frames for m in sse.messages(frame)]
    assert [m.get("method") for m in messages] == [
        "notifications/subscriptions/acknowledged",
        None,
    ]
    assert messages[1] == closing("listen-1")


def test_a_user_the_authenticator_did_not_read_from_the_database_is_not_replaced(
    client: Client, settings: Any, view_author: Permission
):
    """A DRF class may vouch for a user object of its own (simplejwt's stateless
    ``TokenUser``), with none of the permissions of the database row that shares its pk.
    Every request of that caller is decided with that object; a recheck must not swap in
    the database row, which would let the stream hear of what ``resources/read`` refuses."""
    pytest.importorskip("rest_framework")
    stateless_settings(settings)
    user = User.objects.create_user("stateless")
    user.user_permissions.add(view_author)  # the row may; the token's user may not

    before, after = first_uris(
        client,
        "staff://x",
        lambda: None,
        headers=stateless_bearer(user.pk),
    )

    assert (before, after) == ("plain://note", "plain://note")


def test_a_check_that_reads_the_requests_user_sees_the_user_re_read(
    client: Client, view_author: Permission, monkeypatch: pytest.MonkeyPatch
):
    """``ctx.user`` is ``request.user`` (docs/guides/tools.md): a project's ``visible``
    that asks ``ctx.request.user`` must decide with the user as re-read too, not with the
    instance the stream opened with, whose permission cache Django never empties."""
    spec, _ = streams_site.find_resource("scoped://x", None)
    monkeypatch.setattr(
        spec, "visible", lambda ctx, **_: ctx.request.user.has_perm("books.view_author")
    )
    user = signed_in(client, "by-request", view_author)

    before, after = first_uris(
        client, "scoped://x", lambda: user.user_permissions.remove(view_author)
    )

    assert (before, after) == ("scoped://x", "plain://note")
