"""The HTTP headers that mirror the body in 2026-07-28 (basic/transports/streamable-http.mdx).

``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-{Name}`` must agree
with the JSON-RPC body. Values that are not safe plain ASCII travel as
``=?base64?<base64 of UTF-8>?=`` and are decoded strictly before comparing. Every failure
here is a :class:`HeaderMismatch` (-32020).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Final, Literal

from .errors import HeaderMismatch
from .jsonrpc import MAX_SAFE_INTEGER

PROTOCOL_VERSION_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
PARAM_HEADER_PREFIX: Final = "mcp-param-"

_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="
_OWS: Final = " \t"
#: The two headers a WSGI environ carries without the ``HTTP_`` prefix.
_UNPREFIXED: Final = frozenset({"CONTENT_TYPE", "CONTENT_LENGTH"})
#: Visible ASCII plus inner spaces: what a plain (non-sentinel) value may contain.
_PLAIN_VALUE = re.compile(r"\A[\x20-\x7e]*\Z")
#: RFC 9110 ``token``: the grammar of an ``x-mcp-header`` name.
TOKEN = re.compile(r"\A[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
#: RFC 8259's ``number`` in ASCII digits (``[0-9]``, not ``\d``, which matches any script's).
_JSON_NUMBER = re.compile(r"\A-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")

HeaderType = Literal["string", "integer", "boolean"]


@dataclass(frozen=True, slots=True)
class HeaderParam:
    """A tool argument mirrored in ``Mcp-Param-{header}`` (``x-mcp-header`` in its schema)."""

    argument: str
    header: str
    type: HeaderType


def normalise(headers: Mapping[str, str]) -> dict[str, str]:
    """Lower-case names (names are case-insensitive) and trim optional whitespace."""
    return {name.lower(): value.strip(_OWS) for name, value in headers.items()}


def normalise_environ(
    environ: Mapping[str, Any], scope: Mapping[str, Any] | None = None
) -> Mapping[str, str]:
    """:func:`normalise` of the headers in a WSGI-style ``environ`` (Django's
    ``request.META``): the same names and values as ``normalise(request.headers)``, read
    on demand (:class:`EnvironHeaders`) rather than by building a mapping of every header
    first: admission looks up four or five names.

    ``scope`` is the ASGI scope the environ was built from, when there is one: its header
    lines show what the environ cannot, a header sent on several lines, which Django (as
    WSGI servers do) joins into one value with commas (see :func:`repeated_names`)."""
    return EnvironHeaders(environ, _NONE if scope is None else repeated_names(scope))


_NONE: Final[frozenset[str]] = frozenset()


def repeated_names(scope: Mapping[str, Any]) -> frozenset[str]:
    """The ``mcp-`` headers an ASGI ``scope`` carries on more than one line.

    Each of them mirrors one value of the body, so a second line is never legitimate
    (RFC 9110 section 5.3: only a list-valued field may be repeated), and it is
    dangerous: joined, ``us`` and ``eu`` match a body of ``"us,eu"`` here while a proxy
    that read the first line routed on ``us``. Admission refuses such a header (-32020)
    when it reads it."""
    seen: set[bytes] = set()
    repeated: set[str] = set()
    for name, _ in scope.get("headers", ()):
        if name[:4].lower() == b"mcp-":
            lowered = bytes(name).lower()
            if lowered in seen:
                repeated.add(lowered.decode("latin-1"))
            seen.add(lowered)
    return frozenset(repeated) if repeated else _NONE


class EnvironHeaders(Mapping[str, str]):
    """The headers of a WSGI-style environ under their lower-case names, values trimmed.

    A lookup goes straight to the environ key (``mcp-method`` is ``HTTP_MCP_METHOD``);
    iterating builds every name, as :func:`normalise` would.
    """

    __slots__ = ("_environ", "repeated")

    def __init__(self, environ: Mapping[str, Any], repeated: frozenset[str] = _NONE) -> None:
        self._environ = environ
        #: The ``mcp-`` names that came on several header lines (:func:`repeated_names`).
        self.repeated = repeated

    def __getitem__(self, name: str) -> str:
        return str(self._environ[_environ_key(name)]).strip(_OWS)

    def get(self, name: str, default: Any = None) -> Any:
        """What ``Mapping.get`` answers, in one step (admission reads headers this way)."""
        value = self._environ.get(_environ_key(name))
        return default if value is None else str(value).strip(_OWS)

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def _all(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        for key, value in self._environ.items():
            if key.startswith("HTTP_"):
                name = key[5:]
            elif key in _UNPREFIXED:
                name = key
            else:
                continue
            headers[name.replace("_", "-").lower()] = value.strip(_OWS)
        return headers


@lru_cache(maxsize=256)
def _environ_key(name: str) -> str:
    """The environ key of header ``name`` (``mcp-method`` is ``HTTP_MCP_METHOD``): the
    same few names are looked up on every request, so each is spelled once."""
    key = name.upper().replace("-", "_")
    return key if key in _UNPREFIXED else "HTTP_" + key


def decode_value(raw: str, header: str) -> str:
    """Decode a header value, unwrapping the base64 sentinel; raise -32020 if invalid.

    A value that lacks the prefix or suffix, or uses upper-case markers, is an ordinary
    literal; such a literal must still be plain visible ASCII.
    """
    if (
        raw.startswith(_SENTINEL_PREFIX)
        and raw.endswith(_SENTINEL_SUFFIX)
        and len(raw) >= len(_SENTINEL_PREFIX) + len(_SENTINEL_SUFFIX)
    ):
        inner = raw[len(_SENTINEL_PREFIX) : len(raw) - len(_SENTINEL_SUFFIX)]
        try:
            encoded = inner.encode("ascii")
            decoded = base64.b64decode(encoded, validate=True)
            text = decoded.decode("utf-8")
        except (UnicodeError, binascii.Error, ValueError) as exc:
            raise HeaderMismatch(f"{header} header carries invalid base64") from exc
        # Only the canonical encoding: extra or missing padding and stray low bits
        # ("dGVzdB==" also decodes to "test") would let two spellings pass as one value.
        if base64.b64encode(decoded) != encoded:
            raise HeaderMismatch(f"{header} header carries invalid base64")
        return text
    if not _PLAIN_VALUE.match(raw):
        raise HeaderMismatch(f"{header} header contains invalid characters")
    return raw


def _read(headers: Mapping[str, str], name: str, label: str) -> str | None:
    """Header ``name``'s value, or None; -32020 when it came on several lines."""
    if name in getattr(headers, "repeated", _NONE):
        raise HeaderMismatch(f"{label} header is sent more than once")
    return headers.get(name)


def require_equal(headers: Mapping[str, str], name: str, label: str, expected: Any) -> None:
    """Raise -32020 unless header ``name`` is present and equals ``expected`` (no decoding:
    a value that is not plain visible ASCII is refused, whatever the body holds)."""
    value = _read(headers, name, label)
    if value is None:
        raise HeaderMismatch(f"Missing required {label} header")
    if not _PLAIN_VALUE.match(value):
        raise HeaderMismatch(f"{label} header contains invalid characters")
    if value != expected:
        raise HeaderMismatch(f"{label} header does not match the request body")


def require_name(headers: Mapping[str, str], expected: Any) -> None:
    """Check ``Mcp-Name`` (sentinel-decoded) against the body's name or URI."""
    value = _read(headers, NAME_HEADER, "Mcp-Name")
    if value is None:
        raise HeaderMismatch("Missing required Mcp-Name header")
    if decode_value(value, "Mcp-Name") != expected:
        raise HeaderMismatch("Mcp-Name header does not match the request body")


def require_params(
    headers: Mapping[str, str], params: Mapping[str, HeaderParam], arguments: Mapping[str, Any]
) -> None:
    """Check every ``x-mcp-header`` argument against its header.

    An argument that is absent or null has no header and none is expected; but a header
    sent for it is refused: an intermediary routing on the header would act on a value
    the server never sees (the handler would take its default instead). Only the name the
    schema gives is read: a header name holding ``_``, which servers drop, is refused when
    the tool is declared (:mod:`.header_schema`), so no other spelling is looked up (and
    none rewarded).
    """
    for param in params.values():
        value = arguments.get(param.argument)
        label = f"Mcp-Param-{param.header}"
        raw = _read(headers, PARAM_HEADER_PREFIX + param.header.lower(), label)
        if value is None:
            if raw is not None:
                raise HeaderMismatch(f"{label} header has no value in the request body")
            continue
        if param.type == "integer" and _unsafe_integer(value):
            raise HeaderMismatch(
                f"{label} header cannot carry an integer outside -(2**53-1) to 2**53-1"
            )
        if raw is None:
            raise HeaderMismatch(f"Missing required {label} header")
        if not _matches(decode_value(raw, label), value):
            raise HeaderMismatch(f"{label} header does not match the request body")


def _unsafe_integer(value: Any) -> bool:
    """Whether ``value`` is a number outside the range an ``x-mcp-header`` integer must keep
    to (streamable-http.mdx: the safe range for JavaScript, ±(2**53-1)): beyond it a double
    rounds, so an intermediary reading the header would route on another number than the
    one the server acts on (``9007199254740993`` reads as ``9007199254740992``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def _matches(text: str, value: Any) -> bool:
    """Compare a decoded header value with a body value by the spec's conversion rules."""
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, int | float):
        # A JSON number in ASCII only: Decimal alone also reads "4_2" and other scripts'
        # digits ("٤٢") as 42, a value an intermediary routing on the header reads
        # otherwise than the server.
        if not _JSON_NUMBER.match(text):
            return False
        try:
            return Decimal(text) == Decimal(str(value))
        except InvalidOperation:
            return False
    if isinstance(value, str):
        return text == value
    return False
