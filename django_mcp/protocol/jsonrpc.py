"""JSON-RPC 2.0 framing for MCP: one message per body, no batches, ids never null.

``parse_message`` turns raw bytes into a :class:`Request` or :class:`Notification`, or
raises a :class:`ParseError`/:class:`InvalidRequest` that still knows the request id when
one could be read, so the error can echo it (basic/index.mdx, "Responses").
"""

from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Final, TypeAlias, TypeGuard

from . import jsontext
from .errors import InvalidRequest, MCPError, ParseError

#: A string or an integer (schema.json ``RequestId``), the integer in JSON Schema 2020-12's
#: sense: any number with a zero fractional part, so ``1.0`` too, which Python's json reads
#: as a float and which is kept as one (see :func:`is_valid_id`).
RequestId: TypeAlias = str | int | float
JSONRPC_VERSION: Final = "2.0"
#: The largest integer up to which a double holds every integer exactly (RFC 7493, I-JSON,
#: section 2.2: the range ±(2**53-1) where implementations agree on an integer's value).
MAX_SAFE_INTEGER: Final = 2**53 - 1
#: The longest id (and progress token) the server echoes, in characters (an integer's
#: digits). Every response repeats the id, and every progress notification the token:
#: unbounded, a client makes the server write a large value back many times (a 500 KB
#: token went out four times).
MAX_ID_CHARS: Final = 256


@dataclass(frozen=True, slots=True)
class Request:
    """A JSON-RPC request: it has an id and expects exactly one response."""

    id: RequestId
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Notification:
    """A JSON-RPC notification: no id, and the receiver never replies."""

    method: str
    params: dict[str, Any] | None


Message: TypeAlias = Request | Notification


class MessageError(Exception):
    """A body that is not an acceptable message, with the id if it could be read.

    ``is_response``: the body is a JSON-RPC response (``result`` or ``error``, no
    ``method``), which a client never sends; its id, if any, is that of a request of the
    server's, not of the client's.
    """

    def __init__(
        self,
        error: MCPError,
        request_id: RequestId | None = None,
        *,
        is_notification: bool = False,
        is_response: bool = False,
    ) -> None:
        super().__init__(error.message)
        self.error = error
        self.request_id = request_id
        self.is_notification = is_notification
        self.is_response = is_response


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400: valid syntax, but no JSON text can carry it back
        raise ValueError(f"{text} is out of range")
    return value


#: Built once: ``json.loads`` with hooks builds a new decoder on every call. Public for
#: what decodes part of a message by the same rules (:mod:`.leading_id`).
STRICT_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
#: The decoder's own scanner, for documents with no whitespace around them (typeshed does
#: not declare the attribute ``JSONDecoder.__init__`` sets).
_SCAN: Final[Callable[[str, int], tuple[Any, int]]] = STRICT_DECODER.scan_once  # type: ignore[attr-defined]


#: Built once (see :mod:`.jsontext`): ``json.dumps`` with options builds a new encoder on
#: every call.
_ENCODE: Final = jsontext.encoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ASCII_ENCODE: Final = jsontext.encoder(separators=(",", ":"), allow_nan=False)


def decode_json(body: bytes) -> Any:
    """Decode a UTF-8 JSON document strictly (no NaN/Infinity, no other encodings)."""
    try:
        text = body.decode("utf-8")
        if text.startswith("\ufeff"):  # what json.loads refuses: a byte order mark
            raise ValueError("Unexpected UTF-8 BOM")
        # What STRICT_DECODER.decode does, without its two whitespace matches when the document
        # fills the text exactly (as clients send it); anything else takes the full path,
        # which accepts and refuses exactly as before.
        try:
            document, end = _SCAN(text, 0)
        except StopIteration:
            return STRICT_DECODER.decode(text)
        return document if end == len(text) else STRICT_DECODER.decode(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise MessageError(ParseError()) from exc


def is_valid_id(value: Any) -> TypeGuard[RequestId]:
    """Whether ``value`` is a RequestId (or a ProgressToken, typed alike): a string or an
    integer; never null, a boolean, a fraction or a structure.

    An integer as schema.json means it (JSON Schema 2020-12, "type": "integer"): any number
    with a zero fractional part, however it is written, so ``1.0`` and ``1e2`` are ones.
    Python's json reads them as floats, and they stay floats: the response carries "the
    same value" the request sent (JSON-RPC 2.0, "Response object"), and it is echoed as a
    float (``1.0`` as written, ``1e2`` as ``100.0``, the same JSON number) because clients
    whose JSON keeps a float apart from an integer (Rust's serde_json, Java's Jackson)
    would not match a ``1`` with their ``1.0``.
    Both validate as a RequestId. As a key (in-flight ids, cancellation) ``1.0`` is the id
    ``1``, since Python's ``1.0 == 1`` and both hash alike: the same JSON value.

    Only within ±(2**53-1): beyond it a double no longer holds every integer, so the value
    read may not be the one sent (``9007199254740993.0`` reads as ``...992.0``), and I-JSON
    (RFC 7493, 2.2) leaves such numbers to strings. An integer written without a fraction
    or an exponent is read exactly at any size (up to :data:`MAX_ID_CHARS` digits). A
    non-finite number never gets here: :data:`STRICT_DECODER` refuses ``NaN`` and ``1e400``
    as not JSON (-32700).
    """
    if isinstance(value, str):
        return True
    if isinstance(value, float):
        return value.is_integer() and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    return isinstance(value, int) and not isinstance(value, bool)


def is_oversized(value: RequestId) -> bool:
    """Whether an id or progress token is too large to echo (see :data:`MAX_ID_CHARS`)."""
    return len(value if isinstance(value, str) else str(value)) > MAX_ID_CHARS


#: A JSON string, escapes included: what :func:`nests_deeper` takes out before it counts
#: brackets, since a bracket inside a string opens nothing.
_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
#: Every opening bracket becomes a step of +1, every closing one of -1 (as signed bytes),
#: and every other byte is deleted by the same ``translate``.
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS: Final = bytes(set(range(256)) - set(b"[]{}"))


def nests_deeper(body: bytes, max_depth: int) -> bool:
    """Whether ``body``, a document :func:`decode_json` accepted, nests arrays and objects
    deeper than ``max_depth``.

    Worked out on the bytes in one linear pass at C speed, not by walking the parsed
    values one by one in Python, which a body of a million empty arrays (a few megabytes,
    three levels deep) made cost seconds of a worker: strings taken out (a bracket inside
    one opens nothing), each bracket left as a step of +1 or -1, and the deepest running
    sum is the depth. (An earlier version deleted adjacent pairs once per level: C speed
    too, but ``max_depth`` passes over the body, seconds again for chains just under a
    high limit.)
    """
    steps = _STRING.sub(b"", body).translate(_STEPS, _NOT_BRACKETS)
    return max(accumulate(array("b", steps)), default=0) > max_depth


def may_nest_deeper(body: bytes, max_depth: int) -> bool:
    """Whether ``body`` has enough brackets to nest deeper than ``max_depth``: every level
    opens one, so a body with fewer needs no closer look (two C-speed counts instead)."""
    return body.count(b"[") + body.count(b"{") > max_depth


def parse_message(body: bytes, *, max_depth: int | None = None) -> Message:
    """Parse one JSON-RPC request or notification from ``body``.

    A body nested deeper than ``max_depth`` is an invalid request: deep values cost every
    later step (validation, logging, serialising an echo) time and stack.
    """
    document = decode_json(body)
    if isinstance(document, list):
        raise MessageError(InvalidRequest("Batch requests are not supported"))
    if not isinstance(document, dict):
        raise MessageError(InvalidRequest("A JSON-RPC message must be an object"))
    has_id = "id" in document
    raw_id = document.get("id")
    request_id = raw_id if is_valid_id(raw_id) else None
    if request_id is not None and is_oversized(request_id):
        raise MessageError(InvalidRequest('"id" is too large to echo'))  # so it is not
    notification = not has_id
    # Marked before the checks that may refuse it first (too deep, a wrong "jsonrpc"): the
    # id of a response names a request of the server's, never one of the client's, and
    # stdio must not answer it under that id whatever else is wrong with it.
    response = "method" not in document and ("result" in document or "error" in document)
    if max_depth is not None and may_nest_deeper(body, max_depth) and nests_deeper(body, max_depth):
        raise _invalid(
            f"The message nests deeper than {max_depth} levels",
            request_id,
            notification,
            response=response,
        )
    if document.get("jsonrpc") != JSONRPC_VERSION:
        raise _invalid('"jsonrpc" must be "2.0"', request_id, notification, response=response)
    if response:
        error = InvalidRequest("Clients must not send responses")
        raise MessageError(error, request_id, is_response=True)
    method = document.get("method")
    if not isinstance(method, str) or not method:
        raise _invalid('"method" must be a non-empty string', request_id, notification)
    params = document.get("params")
    if params is not None and not isinstance(params, dict):
        raise _invalid('"params" must be an object', request_id, notification)
    if notification:
        return Notification(method, params)
    if request_id is None:
        raise MessageError(InvalidRequest('"id" must be a string or an integer'))
    return Request(request_id, method, params)


def _invalid(
    message: str, request_id: RequestId | None, notification: bool, *, response: bool = False
) -> MessageError:
    """An invalid request, echoing the id when it could be read (``response``: the body is
    a response, see :class:`MessageError`)."""
    return MessageError(
        InvalidRequest(message), request_id, is_notification=notification, is_response=response
    )


def dumps(document: Any) -> bytes:
    """Serialise compactly as UTF-8, the one encoding MCP allows, always as valid JSON.

    Non-finite floats (which JSON cannot express) become ``null``, as in JavaScript; a lone
    surrogate (legal as a ``\\ud800`` escape on input, e.g. in an echoed id) is written as
    an escape instead of making the response unencodable.
    """
    try:
        text = _ENCODE(document)
    except ValueError:
        document = _finite(document)
        text = _ENCODE(document)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _ASCII_ENCODE(document).encode("ascii")


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def result_response(request_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC response object for a successful request."""
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "result": result}


def error_response(error: MCPError, request_id: RequestId | None) -> dict[str, Any]:
    """The JSON-RPC error response; ``id`` is omitted (never null) when unreadable."""
    response: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION}
    if request_id is not None:
        response["id"] = request_id
    response["error"] = error.to_dict()
    return response


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A JSON-RPC notification object (server to client)."""
    message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "method": method}
    if params is not None:
        message["params"] = params
    return message
