"""Signed, self-contained pagination cursors (server/utilities/pagination.mdx).

A cursor is an offset signed with the project's ``SECRET_KEY`` and bound to the site and
method, so any worker can continue a listing and a forged or foreign cursor is refused with
-32602 "Invalid cursor".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.core import signing

from .protocol.errors import InvalidParams

T = TypeVar("T")
_SALT = "django_mcp.cursor"


def encode_cursor(site_name: str, method: str, offset: int) -> str:
    return signing.dumps([site_name, method, offset], salt=_SALT, compress=False)


def decode_cursor(cursor: Any, site_name: str, method: str) -> int:
    """The offset a cursor names; -32602 if it is not one we issued for this listing."""
    if not isinstance(cursor, str):
        raise InvalidParams("Invalid cursor")
    try:
        value = signing.loads(cursor, salt=_SALT)
    except signing.BadSignature as exc:
        raise InvalidParams("Invalid cursor") from exc
    if (
        not isinstance(value, list)
        or len(value) != 3
        or value[:2] != [site_name, method]
        or not isinstance(value[2], int)
        or value[2] < 0
    ):
        raise InvalidParams("Invalid cursor")
    return value[2]


def paginate(
    items: Sequence[T], cursor: Any, *, site_name: str, method: str, page_size: int
) -> tuple[Sequence[T], str | None]:
    """One page of ``items`` and the cursor of the next page, if any."""
    offset = 0 if cursor is None else decode_cursor(cursor, site_name, method)
    end = offset + page_size
    next_cursor = encode_cursor(site_name, method, end) if end < len(items) else None
    return items[offset:end], next_cursor
