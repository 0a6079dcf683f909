"""A listen stream ends soon after its caller is no longer allowed to listen.

basic/patterns/subscriptions.mdx ("Cancellation", "Graceful closure"): a server that ends a
subscription SHOULD send the empty ``subscriptions/listen`` result (``resultType:
complete``, the subscription id in ``_meta``), then close the stream. A stream is
authorised once, when it opens, and every other request is authenticated anew
(basic/authorization.mdx), so a stream asks again every ``LISTEN_RECHECK_SECONDS``: a token
revoked or deleted (this site's, django-oauth-toolkit's) or a user deleted or deactivated
ends it with that result, as ``LISTEN_MAX_SECONDS`` does, and the client, listening again,
is refused. Until then, a caller still allowed keeps hearing changes across rechecks.

Through the in-process WSGI path (Django's test client), the ASGI one (Django's async
test client) and the native ASGI path (``NativeMCP`` over httpx's ASGI transport); the
check queries the database from a worker thread, hence ``transaction=True``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.utils import timezone

from django_mcp.auth.models import AccessToken
from django_mcp.listen.fanout import notify_tools_changed
from django_mcp.test import AsyncMCPClient

from . import sse
from .remote import STREAMS
from .test_listen import post_listen
from .tools_site import site as streams_site

if TYPE_CHECKING:
    from django.test import Client

#: How often the streams of these tests ask again; they must end well within WITHIN.
RECHECK = 0.2
WITHIN = 10.0

pytestmark = [
    pytest.mark.usefixtures("streams_urls"),
    pytest.mark.django_db(transaction=True),  # the check runs in a worker thread
]


@pytest.fixture(autouse=True)
def _recheck_often(settings: Any) -> None:
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": 0.1,
        "LISTEN_MAX_SECONDS": 60,  # the stream must end long before this
        "LISTEN_RECHECK_SECONDS": RECHECK,
    }


closing = sse.closing


def messages_of(chunks: Iterator[bytes], until: Callable[[dict[str, Any]], bool]) -> list[Any]:
    """The messages of ``chunks`` up to the first for which ``until`` holds (or the end)."""
    deadline = time.monotonic() + WITHIN
    found: list[dict[str, Any]] = []
    for chunk in chunks:
        for frame in sse.parse(chunk):
            if frame.message is not None:
                found.append(frame.message)
                if until(frame.message):
                    return found
        assert time.monotonic() < deadline, "the stream went on"
    return found


def listen_withdrawn(client: Client, token: str | None, withdraw: Callable[[], None]) -> list[Any]:
    """Open a stream with ``token`` (None: the client's session); once a change was
    delivered after a recheck (the caller is still allowed), ``withdraw`` and read the
    stream to its end; the messages after that change."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    response = post_listen(client, {"toolsListChanged": True}, headers=headers)
    assert response["Content-Type"] == "text/event-stream", response.content
    chunks = iter(response.streaming_content)
    try:
        [ack] = sse.parse(next(chunks))
        assert ack.message is not None
        assert ack.message["method"] == "notifications/subscriptions/acknowledged"
        time.sleep(RECHECK * 2)  # at least one recheck, which the caller passes
        notify_tools_changed(site=streams_site)
        changed = messages_of(chunks, lambda m: "method" in m)
        assert [m.get("method") for m in changed] == ["notifications/tools/list_changed"]
        withdraw()
        started = time.monotonic()
        after = messages_of(chunks, lambda m: "result" in m)
        elapsed = time.monotonic() - started
    finally:
        response.close()
    assert elapsed < WITHIN
    return after


@pytest.fixture
def ada(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("ada")


def test_revoking_the_token_ends_the_stream_with_its_result(client: Client, ada: Any):
    row, token = AccessToken.objects.issue(ada)

    def revoke() -> None:
        row.revoked_at = timezone.now()
        row.save(update_fields=["revoked_at"])

    assert listen_withdrawn(client, token, revoke) == [closing("wsgi")]
    # Listening again is refused: the stream's end sent the client back to authentication.
    again = post_listen(
        client, {"toolsListChanged": True}, headers={"Authorization": f"Bearer {token}"}
    )
    assert again.status_code == 401


def test_a_recheck_that_cannot_be_answered_ends_the_stream(
    client: Client, ada: Any, monkeypatch: pytest.MonkeyPatch
):
    """The stream cannot be told that its caller may go on (the database is down): it
    ends, with its result, rather than delivering to a caller it cannot vouch for."""
    _, token = AccessToken.objects.issue(ada)

    def unanswerable() -> None:
        def fails(caller: Any) -> str | None:
            raise RuntimeError("the database is down")

        monkeypatch.setattr("django_mcp.listen.recheck.current", fails)

    assert listen_withdrawn(client, token, unanswerable) == [closing("wsgi")]


def test_deleting_the_token_ends_the_stream(client: Client, ada: Any):
    row, token = AccessToken.objects.issue(ada)

    assert listen_withdrawn(client, token, row.delete) == [closing("wsgi")]


def test_deactivating_the_user_ends_the_stream(client: Client, ada: Any):
    _, token = AccessToken.objects.issue(ada)

    def deactivate() -> None:
        ada.is_active = False
        ada.save(update_fields=["is_active"])

    assert listen_withdrawn(client, token, deactivate) == [closing("wsgi")]


def test_a_session_users_stream_ends_when_the_user_is_deleted(client: Client, ada: Any):
    """A Django session's caller has no token to ask about: its user is asked."""
    client.force_login(ada)

    assert listen_withdrawn(client, None, ada.delete) == [closing("wsgi")]


def test_signing_out_ends_a_session_callers_stream(client: Client, ada: Any):
    """Signing out deletes the session: the stream's next request would be anonymous, so
    the stream ends too (django.contrib.auth.get_user finds no session)."""
    client.force_login(ada)

    assert listen_withdrawn(client, None, client.logout) == [closing("wsgi")]


def test_changing_the_password_ends_a_session_callers_stream(client: Client, ada: Any):
    """Django signs every other session out when a password changes (the session carries
    the password's hash): that session's stream ends with it."""
    client.force_login(ada)

    def change_password() -> None:
        ada.set_password("a new one")
        ada.save()

    assert listen_withdrawn(client, None, change_password) == [closing("wsgi")]


def test_another_session_of_the_same_user_signing_out_leaves_the_stream_open(
    client: Client, ada: Any
):
    """Only the stream's own session counts: the user signing out elsewhere ends nothing."""
    client.force_login(ada)
    elsewhere = type(client)()
    elsewhere.force_login(ada)
    response = post_listen(client, {"toolsListChanged": True})
    chunks = iter(response.streaming_content)
    try:
        next(chunks)  # the acknowledgement
        elsewhere.logout()
        time.sleep(RECHECK * 3)  # several rechecks, each of which the session passes
        notify_tools_changed(site=streams_site)
        changed = messages_of(chunks, lambda m: "method" in m)
    finally:
        response.close()
    assert [m.get("method") for m in changed] == ["notifications/tools/list_changed"]


@pytest.mark.parametrize(
    "authenticators",
    [
        {"AUTHENTICATORS": ["django_mcp.auth.oauth.dot.DOTAuthenticator"]},
        {
            "AUTHENTICATORS": ["django_mcp.auth.drf.DRFAuthenticator"],
            "DRF_AUTHENTICATION_CLASSES": [
                "oauth2_provider.contrib.rest_framework.OAuth2Authentication"
            ],
        },
    ],
    ids=["dot", "dots-drf-class"],
)
def test_revoking_a_django_oauth_toolkit_token_ends_the_stream(
    client: Client, ada: Any, settings: Any, authenticators: dict[str, Any]
):
    """DOT deletes the token it revokes; the stream's caller is ``dot:<pk>``, also when
    DOT's DRF class accepted the token (the bridge named it ``drf:...``, which no recheck
    reads: the stream went on after the revocation)."""
    pytest.importorskip("oauth2_provider")
    from tests.oauth.test_dot import make_token

    # The streams endpoint's URL: DOT's class also checks the token against it.
    resource = "http://testserver/streams/mcp"
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, **authenticators, "OAUTH": {"RESOURCE": resource}}
    access_token = make_token(ada, resource=[resource])

    assert listen_withdrawn(client, access_token.token, access_token.revoke) == [closing("wsgi")]


def test_under_asgi_revoking_the_token_ends_the_stream(ada: Any):
    """The same stream through Django's ASGI handler (``AsyncClient``)."""
    row, token = AccessToken.objects.issue(ada)

    async def scenario() -> tuple[list[dict[str, Any]], float]:
        client = AsyncMCPClient(STREAMS)
        client.credentials(token)
        got: list[dict[str, Any]] = []
        async with client.listen(toolsListChanged=True) as stream:
            got.append(await asyncio.wait_for(anext(stream), WITHIN))
            await asyncio.sleep(RECHECK * 2)
            await sync_to_async(notify_tools_changed)(site=streams_site)
            got.append(await asyncio.wait_for(anext(stream), WITHIN))
            row.revoked_at = timezone.now()
            await sync_to_async(row.save)(update_fields=["revoked_at"])
            started = time.monotonic()

            async def to_the_result() -> None:
                async for message in stream:
                    got.append(message)
                    if "result" in message:
                        return

            await asyncio.wait_for(to_the_result(), WITHIN)  # else: the stream went on
            return got, time.monotonic() - started

    messages, elapsed = async_to_sync(scenario)()
    assert [m.get("method") for m in messages[:2]] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    listen_id = messages[0]["params"]["_meta"][sse.SUBSCRIPTION_ID_KEY]
    assert messages[2:] == [closing(listen_id)]
    assert elapsed < WITHIN


def test_through_the_native_asgi_path_revoking_the_token_ends_the_stream(ada: Any):
    """The same stream through ``NativeMCP`` (docs/deployment.md, the native ASGI path),
    read whole: it has a whole only because the stream ends."""
    import httpx
    from django.core.asgi import get_asgi_application

    from django_mcp.http.native import NativeMCP
    from tests.helpers import mcp_body, mcp_headers

    row, token = AccessToken.objects.issue(ada)
    body = mcp_body("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=9)
    headers = {**mcp_headers(body), "Authorization": f"Bearer {token}"}

    def revoke() -> None:
        row.revoked_at = timezone.now()
        row.save(update_fields=["revoked_at"])

    async def scenario() -> httpx.Response:
        transport = httpx.ASGITransport(app=NativeMCP(get_asgi_application()))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            listening = asyncio.ensure_future(
                c.post(STREAMS, content=json.dumps(body), headers=headers, timeout=WITHIN)
            )
            await asyncio.sleep(RECHECK * 3)  # open, acknowledged, and rechecked once
            assert not listening.done()
            await sync_to_async(revoke)()
            return await asyncio.wait_for(listening, WITHIN)  # else: the stream went on

    response = async_to_sync(scenario)()
    assert response.headers["content-type"] == "text/event-stream"
    messages = sse.messages(response.content)
    assert messages[0]["method"] == "notifications/subscriptions/acknowledged"
    assert messages[1:] == [closing(9)]
