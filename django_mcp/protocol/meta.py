"""Per-request ``params._meta`` of MCP 2026-07-28 (basic/index.mdx, "_meta").

Every request carries its protocol version and client capabilities; nothing is inferred
from earlier requests. Parsing happens in two steps, matching the validation order of the
conformance suite: the required keys first (before header comparison), the optional keys
after the revision and method are known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .errors import InvalidRequestMeta
from .jsonrpc import MAX_ID_CHARS, RequestId, is_oversized, is_valid_id

PROTOCOL_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY: Final = "io.modelcontextprotocol/subscriptionId"
PROGRESS_TOKEN_KEY: Final = "progressToken"
TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")

#: RFC 5424 severities, lowest first, as MCP names them.
LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """The client's self-reported ``Implementation``: for display and logs, never trust."""

    name: str
    version: str
    title: str | None = None


@dataclass(frozen=True, slots=True)
class RequestMeta:
    """The validated ``_meta`` of one request."""

    protocol_version: str
    client_capabilities: Mapping[str, Any]
    client_info: ClientInfo | None = None
    log_level: str | None = None
    progress_token: RequestId | None = None
    trace: Mapping[str, str] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)

    def has_capability(self, name: str, sub: str | None = None) -> bool:
        """Whether the client declared capability ``name`` (and ``sub`` inside it)."""
        value = self.client_capabilities.get(name)
        if not isinstance(value, Mapping):
            return False
        return sub is None or isinstance(value.get(sub), Mapping)


def required_meta(
    params: Mapping[str, Any] | None,
) -> tuple[Any, Mapping[str, Any], Mapping[str, Any]]:
    """Return ``(protocolVersion, clientCapabilities, _meta)`` or raise -32602.

    The version is returned unchecked (any JSON value): comparing it with the header and
    with the supported list are later steps with their own errors.
    """
    if params is None:
        raise InvalidRequestMeta("Request params with _meta are required")
    meta = params.get("_meta")
    # type() first: JSON objects are dicts, and an ABC check costs several times more.
    if type(meta) is not dict and not isinstance(meta, Mapping):
        raise InvalidRequestMeta("params._meta is required and must be an object")
    if PROTOCOL_VERSION_KEY not in meta:
        raise InvalidRequestMeta(f"_meta is missing {PROTOCOL_VERSION_KEY}")
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        raise InvalidRequestMeta(f"{PROTOCOL_VERSION_KEY} must be a string")
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    if type(capabilities) is not dict and not isinstance(capabilities, Mapping):
        raise InvalidRequestMeta(f"_meta is missing {CLIENT_CAPABILITIES_KEY} (an object)")
    return version, capabilities, meta


#: What :func:`complete_meta` reads for a key the ``_meta`` leaves out (None is a value).
_ABSENT: Final[Any] = object()


def complete_meta(
    version: str, capabilities: Mapping[str, Any], meta: Mapping[str, Any]
) -> RequestMeta:
    """Validate the optional keys and build the :class:`RequestMeta`; raise -32602.

    A key sent as ``null`` is a value of the wrong type, refused as any other (-32602,
    HTTP 400, the message naming the key), not taken for a key left out. schema.json's
    ``RequestMetaObject`` types ``clientInfo`` as an ``Implementation`` (an object),
    ``logLevel`` as a ``LoggingLevel`` (a string enum) and ``progressToken`` as a
    ``ProgressToken`` (string | integer): none of them admits null, and an optional key is
    optional by being left out (``required`` does not list it), never by being null. Real
    clients leave them out: the official Python SDK (``mcp`` 2.3) serialises with
    ``exclude_none``, so strictness costs it nothing, and a client that does send null
    learns of its bug at once instead of silently getting no progress or no logs.
    """
    # Positional, in field order, and each optional key checked only when present: this
    # runs for every request, and most carry client info at most.
    get = meta.get
    info = get(CLIENT_INFO_KEY, _ABSENT)
    level = get(LOG_LEVEL_KEY, _ABSENT)
    token = get(PROGRESS_TOKEN_KEY, _ABSENT)
    return RequestMeta(
        version,
        capabilities,
        None if info is _ABSENT else _client_info(info),
        None if level is _ABSENT else _log_level(level),
        None if token is _ABSENT else _progress_token(token),
        {k: meta[k] for k in TRACE_KEYS if isinstance(get(k), str)}
        if not meta.keys().isdisjoint(TRACE_KEYS)
        else {},
        meta,
    )


def _client_info(value: Any) -> ClientInfo:
    if not (
        (type(value) is dict or isinstance(value, Mapping))
        and isinstance(value.get("name"), str)
        and isinstance(value.get("version"), str)
    ):
        raise InvalidRequestMeta(f"{CLIENT_INFO_KEY} must be an object with name and version")
    title = value.get("title")
    return ClientInfo(value["name"], value["version"], title if isinstance(title, str) else None)


def readable_client_info(params: Any) -> ClientInfo | None:
    """The client info of a request that may be refused, where its ``_meta`` is readable.

    Never raises: a refused request is still recorded with the client that sent it, and a
    request whose ``_meta`` is not even readable simply has no client (for the request log).
    """
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    if not isinstance(meta, Mapping) or meta.get(CLIENT_INFO_KEY) is None:
        return None
    try:
        return _client_info(meta[CLIENT_INFO_KEY])
    except InvalidRequestMeta:
        return None


def _log_level(value: Any) -> str:
    if value not in LOG_LEVELS:
        raise InvalidRequestMeta(f"{LOG_LEVEL_KEY} must be one of: {', '.join(LOG_LEVELS)}")
    return str(value)


def _progress_token(value: Any) -> RequestId:
    """The token every progress notification repeats, typed and bounded like a request id
    (schema.json ``ProgressToken`` is string | integer, as ``RequestId``): ``1.0`` is an
    integer and is echoed as sent (:func:`~.jsonrpc.is_valid_id`)."""
    if not is_valid_id(value):
        raise InvalidRequestMeta(f"{PROGRESS_TOKEN_KEY} must be a string or an integer")
    if is_oversized(value):
        raise InvalidRequestMeta(
            f"{PROGRESS_TOKEN_KEY} is too large (at most {MAX_ID_CHARS} characters)"
        )
    return value
