"""A resource subscription and an update compare URIs as ``resources/read`` does.

resources/read looks URIs up in RFC 3986 normal form (``notes://%61dmin`` reads
``notes://admin``), so a client subscribed under one spelling must hear of a change the
server announces under another; an exact string comparison dropped it silently.
"""

from __future__ import annotations

import pytest

from django_mcp.protocol.subscriptions import SubscriptionFilter


@pytest.mark.parametrize(
    ("subscribed", "announced"),
    [
        ("notes://%61dmin", "notes://admin"),
        ("notes://admin", "notes://%61dmin"),
        ("files://a%2fb", "files://a%2Fb"),
    ],
)
def test_a_subscription_in_another_spelling_hears_of_the_update(
    subscribed: str, announced: str
) -> None:
    wanted = SubscriptionFilter(resource_subscriptions=(subscribed,))

    assert wanted.subscribes_to(announced)


def test_a_reserved_character_is_not_its_triplet() -> None:
    """RFC 3986, 6.2.2.2: only unreserved characters are decoded; ``%2F`` is not ``/``."""
    wanted = SubscriptionFilter(resource_subscriptions=("files://a%2Fb",))

    assert not wanted.subscribes_to("files://a/b")
