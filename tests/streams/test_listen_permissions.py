"""Resource updates on a listen stream obey the same permissions as reads.

basic/patterns/subscriptions.mdx: ``notifications/resources/updated`` goes to streams that
subscribed to the URI (``resourceSubscriptions``). A stream is a way to learn that a
resource exists and changed, so it is delivered only when the listener may read the URI:
``find_resource(uri, context)`` for the listener's caller, as ``resources/read`` decides.
``staff://{name}`` on the ``streams`` site needs ``books.view_author``. Each test publishes
the gated update first and an ungated one (``plain://note``) after it: the first message
the stream carries tells whether the gated one was delivered, without waiting for an
absence. The in-process WSGI path, the in-memory channel layer.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import Permission, User

from django_mcp.listen.fanout import notify_resource_updated

from . import sse
from .test_listen import post_listen
from .tools_site import site as streams_site

if TYPE_CHECKING:
    from collections.abc import Iterator

    from django.test import Client

SUBSCRIBED = ["staff://{name}", "staff://x", "plain://note"]


def first_change(client: Client, subscriptions: list[str]) -> dict[str, Any]:
    """Open a stream, publish ``staff://x`` then ``plain://note``; the first change."""
    response = post_listen(client, {"resourceSubscriptions": subscriptions})
    assert response["Content-Type"] == "text/event-stream", response.content
    chunks = iter(response.streaming_content)
    try:
        [ack] = sse.parse(next(chunks))
        assert ack.message is not None
        assert ack.message["params"]["notifications"]["resourceSubscriptions"] == subscriptions
        notify_resource_updated("staff://x", site=streams_site)
        notify_resource_updated("plain://note", site=streams_site)
        return next_message(chunks, within=10)
    finally:
        response.close()


def next_message(chunks: Iterator[bytes], within: float) -> dict[str, Any]:
    deadline = time.monotonic() + within
    for chunk in chunks:
        for frame in sse.parse(chunk):
            if frame.message is not None:
                sse.check_message(frame.message)
                return frame.message
        assert time.monotonic() < deadline, "no message in time"
    raise AssertionError("the stream ended without a message")


@pytest.fixture
def _short_keepalive(settings: Any) -> None:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_KEEPALIVE_SECONDS": 0.05}


pytestmark = [
    pytest.mark.usefixtures("streams_urls", "_short_keepalive"),
    pytest.mark.django_db(transaction=True),  # the check runs in a worker thread
]


def test_an_anonymous_listener_hears_nothing_of_a_resource_it_may_not_read(client: Client):
    """The anonymous caller may not read ``staff://x`` (resources/read refuses it), so a
    stream subscribed to it, by URI and by template, does not hear of its update."""
    message = first_change(client, SUBSCRIBED)

    assert message["method"] == "notifications/resources/updated"
    assert message["params"]["uri"] == "plain://note"


def test_a_listener_with_the_permission_hears_of_the_update(client: Client):
    """A signed-in user holding ``books.view_author`` reads ``staff://x`` and hears of it."""
    user = User.objects.create_user("reader")
    user.user_permissions.add(Permission.objects.get(codename="view_author"))
    client.force_login(user)

    message = first_change(client, SUBSCRIBED)

    assert message["params"]["uri"] == "staff://x"


def test_a_signed_in_user_without_the_permission_hears_nothing_of_it(client: Client):
    """Being signed in is not enough: the permission is what resources/read asks for."""
    client.force_login(User.objects.create_user("outsider"))

    message = first_change(client, SUBSCRIBED)

    assert message["params"]["uri"] == "plain://note"


def test_a_prefix_that_is_no_declared_uri_or_template_matches_nothing(client: Client):
    """A subscription matches exactly or through a declared template, never as a string
    prefix: ``staff://`` does not subscribe a permitted user to ``staff://x``."""
    user = User.objects.create_user("prefix")
    user.user_permissions.add(Permission.objects.get(codename="view_author"))
    client.force_login(user)

    message = first_change(client, ["staff://", "plain://note"])

    assert message["params"]["uri"] == "plain://note"


# -- Scopes: the listener's caller is the request's resolved Caller -------------------------


def first_scoped_change(client: Client, token: str) -> dict[str, Any]:
    """Open a stream with ``token``, publish ``scoped://x`` then ``plain://note``."""
    subscriptions = ["scoped://{name}", "plain://note"]
    response = post_listen(
        client,
        {"resourceSubscriptions": subscriptions},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response["Content-Type"] == "text/event-stream", response.content
    chunks = iter(response.streaming_content)
    try:
        next(chunks)  # the acknowledgement
        notify_resource_updated("scoped://x", site=streams_site)
        notify_resource_updated("plain://note", site=streams_site)
        return next_message(chunks, within=10)
    finally:
        response.close()


def token_for(username: str, scopes: str) -> str:
    from django_mcp.auth.models import AccessToken

    user = User.objects.create_user(username)
    return AccessToken.objects.issue(user, scopes=scopes)[1]


def test_a_token_with_the_resources_scope_hears_of_its_update(client: Client):
    """``scoped://{name}`` needs ``notes:read``: a token granting it reads it, so it hears."""
    message = first_scoped_change(client, token_for("scoped", "notes:read"))

    assert message["params"]["uri"] == "scoped://x"


def test_a_token_without_the_resources_scope_hears_nothing_of_it(client: Client):
    """resources/read of ``scoped://x`` with this token is a 403 ``insufficient_scope``
    (ADR 0005, basic/authorization.mdx "Scope Challenge Handling"); a stream cannot answer
    that, so the update is not delivered at all. The token's user is signed in: only the
    credential's scopes decide."""
    message = first_scoped_change(client, token_for("unscoped", "books:read"))

    assert message["params"]["uri"] == "plain://note"
