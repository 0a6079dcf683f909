"""The error catalogue of MCP 2026-07-28 and its code allocation policy.

Every protocol failure the server can produce is an :class:`MCPError` subclass that differs
only by class attributes. Transports never build error text themselves: they serialise one
of these and choose a status from their own table.

Allocation policy (basic/index.mdx, "Error codes"): -32700 and -32600..-32603 keep their
JSON-RPC meaning, -32000..-32019 are legacy implementation-defined (no new use), and
-32020..-32099 belong to the MCP specification. Application errors live outside
-32768..-32000.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
#: django-mcp's own, application-defined code (outside -32768..-32000, as the allocation
#: policy requires of anything the spec does not define): "429" in its last digits.
RATE_LIMITED: Final = -31429
#: django-mcp's own code (application-defined, outside -32768..-32000): a
#: ``subscriptions/listen`` stream was refused because a stream limit is reached.
LISTEN_LIMIT_REACHED: Final = -31000

JSONRPC_STANDARD_CODES: Final = frozenset(
    {PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR}
)
#: Codes the 2026-07-28 revision defines inside its reserved range.
SPEC_DEFINED_CODES: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)
#: Codes that must never be emitted by a 2026-07-28 server (old or draft numbers).
FORBIDDEN_CODES: Final = frozenset({-32001, -32002, -32003, -32004, -32042})


def is_implementation_defined(code: int) -> bool:
    """Whether ``code`` is in the legacy implementation-defined block -32000..-32019."""
    return -32019 <= code <= -32000


def is_spec_reserved(code: int) -> bool:
    """Whether ``code`` is in the block -32020..-32099 that only the MCP spec allocates."""
    return -32099 <= code <= -32020


def is_jsonrpc_reserved(code: int) -> bool:
    """Whether ``code`` lies in JSON-RPC's reserved range -32768..-32000."""
    return -32768 <= code <= -32000


def is_allowed_code(code: int) -> bool:
    """Whether a server following the allocation policy may emit ``code``.

    Allowed: the JSON-RPC standard codes, the spec-defined MCP codes, and any application
    code outside the reserved range. Everything else would be an invented code.
    """
    if code in FORBIDDEN_CODES:
        return False
    if code in JSONRPC_STANDARD_CODES or code in SPEC_DEFINED_CODES:
        return True
    return not is_jsonrpc_reserved(code)


class MCPError(Exception):
    """A protocol failure, carrying its JSON-RPC code, a one-sentence message and ``data``.

    Subclasses set ``code`` and ``default_message``; instances may refine the message and
    attach ``data``. ``str(error)`` is the message.
    """

    code: ClassVar[int] = INTERNAL_ERROR
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, message: str | None = None, *, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member for this failure."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code})"


class ParseError(MCPError):
    """The body is not JSON (or not UTF-8)."""

    code = PARSE_ERROR
    default_message = "Parse error"


class InvalidRequest(MCPError):
    """The body is JSON but not a single, valid JSON-RPC request or notification."""

    code = INVALID_REQUEST
    default_message = "Invalid request"


class RequestTooLarge(InvalidRequest):
    """The body exceeds the configured size limit."""

    default_message = "Request body is too large"


class ForbiddenOrigin(InvalidRequest):
    """The ``Origin`` header names an origin that may not use this endpoint."""

    default_message = "Origin is not allowed"


class Unauthenticated(InvalidRequest):
    """No valid credentials: none were sent where they are required, or the token is
    invalid, expired or revoked (HTTP 401 with ``WWW-Authenticate``, basic/authorization.mdx).
    The status and challenge carry the meaning; the body is a courtesy."""

    default_message = "Authentication required"


class InsufficientScope(InvalidRequest):
    """The credential is valid but lacks scopes the operation needs (HTTP 403 with
    ``WWW-Authenticate: Bearer error="insufficient_scope"``, RFC 6750 section 3.1)."""

    default_message = "Insufficient scope"


class MethodNotFound(MCPError):
    """Unknown, removed, or capability-gated method the server does not advertise."""

    code = METHOD_NOT_FOUND
    default_message = "Method not found"


class InvalidParams(MCPError):
    """Params break the request's schema: unknown tool, invalid cursor, and the like."""

    code = INVALID_PARAMS
    default_message = "Invalid params"


class InvalidRequestMeta(InvalidParams):
    """``params._meta`` is missing or malformed; on HTTP this one is a 400."""

    default_message = "Invalid request _meta"


class ResourceNotFound(InvalidParams):
    """``resources/read`` for a URI the server does not have (``data.uri`` names it)."""

    default_message = "Resource not found"

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(message, data={"uri": uri})


class ResourceTooLarge(InvalidParams):
    """``resources/read`` for a file larger than ``RESOURCE_FILE_MAX_BYTES``: it exists but
    is never served (``data.uri`` names it, ``data.maxBytes`` gives the limit)."""

    default_message = "Resource is too large to serve"

    def __init__(self, uri: str, max_bytes: int) -> None:
        super().__init__(data={"uri": uri, "maxBytes": max_bytes})


class InternalError(MCPError):
    """An unexpected server failure; its details are masked outside DEBUG."""

    code = INTERNAL_ERROR
    default_message = "Internal error"


class HeaderMismatch(MCPError):
    """A required HTTP header is missing, malformed, or disagrees with the body."""

    code = HEADER_MISMATCH
    default_message = "Header mismatch"


class MissingRequiredClientCapability(MCPError):
    """The request needs a client capability it did not declare."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY
    default_message = "Missing required client capability"

    def __init__(self, required: dict[str, Any], message: str | None = None) -> None:
        names = ", ".join(sorted(required))
        super().__init__(
            message or f"This request requires the client capability: {names}",
            data={"requiredCapabilities": required},
        )


class UnsupportedProtocolVersion(MCPError):
    """The declared protocol version is not one this server serves."""

    code = UNSUPPORTED_PROTOCOL_VERSION
    default_message = "Unsupported protocol version"

    def __init__(self, requested: Any, supported: list[str]) -> None:
        super().__init__(data={"supported": list(supported), "requested": requested})


class RateLimited(MCPError):
    """The caller, its credential or its address sent more requests than a configured rate
    limit allows; ``data.retryAfter`` is the number of seconds to wait (also sent as the HTTP
    ``Retry-After`` header)."""

    code = RATE_LIMITED
    default_message = "Rate limit exceeded"

    def __init__(self, retry_after: int, message: str | None = None) -> None:
        super().__init__(message, data={"retryAfter": retry_after})
        self.retry_after = retry_after


class TooManyCallerStreams(MCPError):
    """This caller already holds as many ``subscriptions/listen`` streams as one caller
    may (HTTP 429). ``data.limit`` names the limit; refused before any stream opens."""

    code = LISTEN_LIMIT_REACHED
    default_message = "This caller holds too many listen streams"

    def __init__(self, limit: str, message: str | None = None) -> None:
        super().__init__(message, data={"limit": limit})


class ListenUnavailable(MCPError):
    """The server cannot hold another ``subscriptions/listen`` stream now (HTTP 503): the
    process is at its limit, or it is a WSGI worker that may not hold one. ``data.limit``
    names the limit; refused before any stream opens."""

    code = LISTEN_LIMIT_REACHED
    default_message = "The server cannot hold another listen stream now"

    def __init__(self, limit: str, message: str | None = None) -> None:
        super().__init__(message, data={"limit": limit})


#: Every concrete error class the server can raise; the code-walk test iterates over it.
ERROR_CLASSES: Final[tuple[type[MCPError], ...]] = (
    ParseError,
    InvalidRequest,
    RequestTooLarge,
    ForbiddenOrigin,
    Unauthenticated,
    InsufficientScope,
    MethodNotFound,
    InvalidParams,
    InvalidRequestMeta,
    ResourceNotFound,
    ResourceTooLarge,
    InternalError,
    HeaderMismatch,
    MissingRequiredClientCapability,
    UnsupportedProtocolVersion,
    RateLimited,
    TooManyCallerStreams,
    ListenUnavailable,
)
