"""Signed, self-contained pagination cursors (server/utilities/pagination.mdx).

A cursor names the last item of its page (a tool's or prompt's name, a resource's URI),
signed with the project's ``SECRET_KEY``, time-stamped, and bound to the site, the method
and the caller (docs/deployment.md), so any worker can continue a listing, while a forged,
expired (``CURSOR_MAX_AGE``) or foreign cursor is refused with -32602 "Invalid cursor".
The next page starts after that item in the list's order, not at a count of items: a
listing that changes between pages (an item added or removed before the cursor, a deploy
half rolled out) neither skips an item nor repeats one ("cursors SHOULD be stable").
"""

from __future__ import annotations

import datetime
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.core import signing

from django_mcp.protocol.errors import InvalidParams

T = TypeVar("T")
_SALT = "django_mcp.cursor"
#: The longest age a timedelta holds, in seconds (about 2.7 million years).
_LONGEST = datetime.timedelta.max.total_seconds()


def encode_cursor(site_name: str, method: str, after: str, *, principal: str = "anonymous") -> str:
    return signing.dumps([site_name, method, principal, after], salt=_SALT, compress=False)


def decode_cursor(
    cursor: Any,
    site_name: str,
    method: str,
    *,
    principal: str = "anonymous",
    max_age: float | None = None,
) -> str:
    """The key a cursor names; -32602 if it is not one we issued for this listing."""
    if not isinstance(cursor, str):
        raise InvalidParams("Invalid cursor")
    try:
        # An age no timedelta holds (CURSOR_MAX_AGE inf or 1e20) is no limit, not an error.
        age = (
            None if max_age is None or max_age >= _LONGEST else datetime.timedelta(seconds=max_age)
        )
        value = signing.loads(cursor, salt=_SALT, max_age=age)
    except signing.BadSignature as exc:  # includes SignatureExpired
        raise InvalidParams("Invalid cursor") from exc
    if (
        not isinstance(value, list)
        or len(value) != 4
        or value[:3] != [site_name, method, principal]
        or not isinstance(value[3], str)
    ):
        raise InvalidParams("Invalid cursor")
    return value[3]


#: ``paginate``'s cursor when the request has none (a null cursor is an invalid one).
NO_CURSOR: Any = object()


def paginate(
    items: Sequence[T],
    cursor: Any,
    *,
    key: Callable[[T], str],
    site_name: str,
    method: str,
    page_size: int,
    principal: str = "anonymous",
    max_age: float | None = None,
) -> tuple[Sequence[T], str | None]:
    """One page of ``items`` (in ascending order of ``key``) and the cursor of the next
    page, if any."""
    start = 0
    if cursor is not NO_CURSOR:
        after = decode_cursor(cursor, site_name, method, principal=principal, max_age=max_age)
        start = bisect_right(items, after, key=key)  # the first item past the cursor's
    page = items[start : start + page_size]
    next_cursor = (
        encode_cursor(site_name, method, key(page[-1]), principal=principal)
        if start + page_size < len(items)
        else None
    )
    return page, next_cursor
