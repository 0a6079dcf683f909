"""The ``id`` of a JSON-RPC request of which only the beginning was read.

Why: a message too large to accept is refused unread, and over HTTP its refusal needs no
id (the answer goes back on the request's own connection). On stdio every answer shares
one stream, so an error without an id answers nobody, and a client without a timeout
would wait for its request forever. The first bytes of the line are in memory anyway;
clients write ``id`` near the start (before ``params``), so it can usually be found
there, at the top level of the object, without parsing what follows.

An id is echoed only when it is certain: a wrong one would answer another request the
client still waits for. So the look decodes as the full parse does (with its
:data:`~.jsonrpc.STRICT_DECODER`: no ``NaN``, no float out of range; valid UTF-8), an
id must be followed by ``,`` or ``}`` (``1.`` may be the start of ``1.5``), and a second
top-level ``"id"`` within reach (the full parse takes the last) means none. Only the
first :data:`LOOK_BYTES` are looked at, so the look costs little however long the line.
"""

from __future__ import annotations

import re
from typing import Final

from django_mcp.protocol.jsonrpc import STRICT_DECODER, RequestId, is_oversized, is_valid_id

#: How much of the line's beginning is looked at.
LOOK_BYTES: Final = 64 * 1024
#: The longest a UTF-8 character can be cut short at the end of the look.
_MAX_CUT_CHAR: Final = 3
_WHITESPACE: Final = re.compile(r"[ \t\n\r]*")
#: The members of a JSON-RPC response, which no request has. A client writes no responses
#: (basic/transports/stdio.mdx); the id of one it writes anyway is that of a request of the
#: server's, and an error echoing it would be read as the answer to the client's own
#: request with that id (one within the size limit is answered with nothing at all).
_RESPONSE_MEMBERS: Final = frozenset({"result", "error"})


def leading_id(prefix: bytes) -> RequestId | None:
    """The top-level ``id`` of the JSON object ``prefix`` begins, when the look at its
    beginning shows it whole and alone; otherwise None. Each member before it is decoded
    (and skipped) whole, so a nested ``"id"`` is never taken for the request's. A
    ``result`` or ``error`` member makes it a response, whose id is never echoed."""
    text = _text(prefix[:LOOK_BYTES])
    if text is None:
        return None
    position = _skip(text, 0)
    if not text.startswith("{", position):
        return None
    found: RequestId | None = None
    seen = False
    try:
        position += 1
        while True:
            key, position = STRICT_DECODER.raw_decode(text, _skip(text, position))
            position = _skip(text, position)
            if not isinstance(key, str) or not text.startswith(":", position):
                return None
            if key in _RESPONSE_MEMBERS:  # a response's id is the server's, never echoed
                return None
            value, position = STRICT_DECODER.raw_decode(text, _skip(text, position + 1))
            position = _skip(text, position)
            follows = text[position : position + 1]
            if key == "id":
                if seen or follows not in (",", "}"):  # a second id, or one maybe cut
                    return None
                seen = True
                found = value if is_valid_id(value) and not is_oversized(value) else None
            if follows != ",":
                return found
            position += 1
    except (ValueError, RecursionError):  # a member the look cuts off, or not JSON
        return found


def _text(data: bytes) -> str | None:
    """``data`` as UTF-8, allowing only its last character to be cut short; None when it
    is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.reason != "unexpected end of data" or error.start < len(data) - _MAX_CUT_CHAR:
            return None
        return data[: error.start].decode("utf-8")


def _skip(text: str, position: int) -> int:
    """The first position at or after ``position`` that is not JSON whitespace."""
    match = _WHITESPACE.match(text, position)
    return match.end() if match else position
