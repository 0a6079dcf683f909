"""The ``id`` of a JSON-RPC request of which only the beginning was read.

Why: a message too large to accept is refused unread, and over HTTP its refusal needs no
id (the answer goes back on the request's own connection). On stdio every answer shares
one stream, so an error without an id answers nobody, and a client without a timeout
would wait for its request forever. The first bytes of the line are in memory anyway;
clients write ``id`` near the start (before ``params``), so it can usually be found
there, at the top level of the object, without parsing what follows.
"""

from __future__ import annotations

import json
from typing import Final

from django_mcp.protocol.jsonrpc import RequestId, is_oversized, is_valid_id

_DECODER: Final = json.JSONDecoder()
_WHITESPACE: Final = " \t\n\r"


def leading_id(prefix: bytes) -> RequestId | None:
    """The top-level ``id`` of the JSON object ``prefix`` begins, when it is a valid id
    that ``prefix`` holds whole and that comes before any member ``prefix`` cuts off;
    otherwise None. Each member before it is decoded (and skipped) whole, so a nested
    ``"id"`` is never taken for the request's."""
    text = prefix.decode("utf-8", errors="replace")
    position = _skip(text, 0)
    if not text.startswith("{", position):
        return None
    position += 1
    try:
        while True:
            key, position = _DECODER.raw_decode(text, _skip(text, position))
            position = _skip(text, position)
            if not isinstance(key, str) or not text.startswith(":", position):
                return None
            value, position = _DECODER.raw_decode(text, _skip(text, position + 1))
            position = _skip(text, position)
            if key == "id":  # whole only if something follows it: 12 may be the start of 123
                whole = position < len(text)
                valid = whole and is_valid_id(value) and not is_oversized(value)
                return value if valid else None
            if not text.startswith(",", position):
                return None
            position += 1
    except (ValueError, RecursionError):  # a member the prefix cuts off, or not JSON
        return None


def _skip(text: str, position: int) -> int:
    """The first position at or after ``position`` that is not JSON whitespace."""
    while position < len(text) and text[position] in _WHITESPACE:
        position += 1
    return position
