"""Admission: the single place where a raw message becomes a valid request or a failure.

``admit`` applies every protocol rule in the order listed in docs/errors.md, "Where each
error comes from" (which matches the official conformance suite) and returns one value of a
closed set: :class:`Admitted`, :class:`NotificationAccepted` or :class:`Rejected`.
Transports pass in what they have (HTTP a header mapping, stdio ``None``) and only map the
variant to their native form.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeAlias

from . import headers as h
from . import methods as m
from .errors import InvalidParams, MCPError, MethodNotFound
from .jsonrpc import MessageError, Notification, Request, RequestId, parse_message
from .meta import ClientInfo, RequestMeta, complete_meta, readable_client_info, required_meta
from .revisions import RevisionDecision, RevisionPolicy
from .unpaired import may_hold_unpaired, unpaired_in_params


class Catalogue(Protocol):
    """What admission needs to know about the server's declarations for one caller."""

    def implements(self, method: str) -> bool:
        """Whether ``method`` exists and its server capability is advertised."""
        ...

    def tool_header_params(
        self, name: str, meta: Callable[[], RequestMeta], revision: RevisionDecision
    ) -> Mapping[str, h.HeaderParam] | None:
        """The ``x-mcp-header`` arguments of tool ``name``, or None if it is unknown to
        this caller (a tool the caller may not use is unknown). ``meta`` (built when
        called: most tools need no permission check) and ``revision`` describe the
        request, for permission checks."""
        ...


@dataclass(frozen=True, slots=True)
class Admitted:
    """A request that passed every protocol rule, ready for dispatch."""

    request: Request
    meta: RequestMeta
    revision: RevisionDecision


@dataclass(frozen=True, slots=True)
class NotificationAccepted:
    """A notification: accepted and never answered with a JSON-RPC body."""

    notification: Notification


@dataclass(frozen=True, slots=True)
class Rejected:
    """A message refused by a protocol rule; ``error`` carries code, message and data."""

    error: MCPError
    request_id: RequestId | None = None
    method: str | None = None
    declared_revision: str | None = None
    is_notification: bool = False
    #: A JSON-RPC response sent by the client (see :class:`~.jsonrpc.MessageError`): HTTP
    #: refuses it as the answer to its POST; stdio, where it answers nothing, writes none.
    is_response: bool = False
    #: The tool or prompt name or resource URI the request named, for the request log.
    target: str | None = None
    #: What was parsed before the rule failed, for the request log: the client's
    #: self-reported info (where ``_meta`` was readable) and the revision decision.
    client_info: ClientInfo | None = None
    revision: RevisionDecision | None = None


Admission: TypeAlias = Admitted | NotificationAccepted | Rejected


def initialize_error(supported: Sequence[str]) -> MethodNotFound:
    """The answer to a legacy ``initialize``: it names the versions we do speak (8.4)."""
    versions = ", ".join(supported)
    return MethodNotFound(
        f"initialize is not supported; this server speaks MCP {versions} "
        f"(supported versions: {versions})",
        data={"supported": list(supported)},
    )


def admit(
    body: bytes,
    headers: Mapping[str, str] | None,
    catalogue: Catalogue,
    policy: RevisionPolicy,
    *,
    max_depth: int | None = None,
) -> Admission:
    """Turn one raw message into an :data:`Admission`.

    ``headers`` must already be :func:`headers.normalise`-d; ``None`` means the transport
    has no headers (stdio), so the header rules do not apply. ``max_depth`` bounds the
    JSON nesting (see :func:`~.jsonrpc.parse_message`).
    """
    try:
        message = parse_message(body, max_depth=max_depth)
    except MessageError as exc:
        return _malformed(exc)
    if isinstance(message, Notification):
        return NotificationAccepted(message)
    declared: str | None = None
    revision: RevisionDecision | None = None
    try:
        if message.method == m.INITIALIZE:
            raise initialize_error(policy.supported)
        version, capabilities, meta = required_meta(message.params)
        declared = version
        if headers is not None:
            h.require_equal(headers, h.PROTOCOL_VERSION_HEADER, "MCP-Protocol-Version", version)
        revision = policy.decide(version)
        if headers is not None:
            h.require_equal(headers, h.METHOD_HEADER, "Mcp-Method", message.method)
        _require_method(message.method, catalogue)
        params = message.params or {}
        # Step 14 needs to know the caller before the optional _meta keys are checked
        # (step 15), so the catalogue sees the required keys only, built if it asks.
        provisional = partial(RequestMeta, version, capabilities, raw=meta)
        _check_name(message.method, params, headers, catalogue, provisional, revision)
        request_meta = complete_meta(version, capabilities, meta)
        if may_hold_unpaired(body):
            _refuse_unpaired(params)
    except MCPError as exc:
        return Rejected(
            exc,
            message.id,
            message.method,
            declared,
            target=_target(message),
            client_info=readable_client_info(message.params),
            revision=revision,
        )
    return Admitted(message, request_meta, revision)


def refuse_unverified(body: bytes, error: MCPError, *, max_depth: int | None = None) -> Rejected:
    """``error`` as the answer to ``body``, read only as far as what it is (its id,
    method, target and client, for the answer and the log) and never checked against a
    catalogue: for a request whose caller could not be checked, which must learn nothing
    of what the server declares (which names exist, which are hidden). A malformed body
    gets its usual refusal."""
    try:
        message = parse_message(body, max_depth=max_depth)
    except MessageError as exc:
        return _malformed(exc)
    if isinstance(message, Notification):
        return Rejected(error, None, message.method, is_notification=True)
    return Rejected(
        error,
        message.id,
        message.method,
        target=_target(message),
        client_info=readable_client_info(message.params),
    )


def _malformed(exc: MessageError) -> Rejected:
    return Rejected(
        exc.error,
        exc.request_id,
        is_notification=exc.is_notification,
        is_response=exc.is_response,
    )


def _target(message: Request) -> str | None:
    field = m.NAME_FIELDS.get(message.method)
    value = (message.params or {}).get(field) if field else None
    return value if isinstance(value, str) else None


def _refuse_unpaired(params: Mapping[str, Any]) -> None:
    """The last step: text that is not text (see :mod:`.unpaired`)."""
    where = unpaired_in_params(params)
    if where is not None:
        raise InvalidParams(
            f"{where} holds an unpaired UTF-16 surrogate escape (\\ud800 to \\udfff), "
            "which is not a character"
        )


def _require_method(method: str, catalogue: Catalogue) -> None:
    if method in m.REMOVED_METHODS:
        raise MethodNotFound(f"Method not found: {method} was removed in MCP 2026-07-28")
    if not catalogue.implements(method):
        raise MethodNotFound(f"Method not found: {method}")


def _check_name(
    method: str,
    params: Mapping[str, Any],
    headers: Mapping[str, str] | None,
    catalogue: Catalogue,
    meta: Callable[[], RequestMeta],
    revision: RevisionDecision,
) -> None:
    """Steps 13 and 14: ``Mcp-Name``, the tool's existence, and its ``Mcp-Param-*``."""
    field = m.NAME_FIELDS.get(method)
    if field is None:
        return
    value = params.get(field)
    if not isinstance(value, str):
        raise InvalidParams(f"params.{field} is required and must be a string")
    if headers is not None:
        h.require_name(headers, value)
    if method != m.TOOLS_CALL:
        return
    header_params = catalogue.tool_header_params(value, meta, revision)
    if header_params is None:
        raise InvalidParams(f"Unknown tool: {value}", data={"name": value})
    arguments = params.get("arguments")
    if arguments is not None and type(arguments) is not dict and not isinstance(arguments, Mapping):
        raise InvalidParams("params.arguments must be an object")
    if headers is not None and header_params:
        h.require_params(headers, header_params, arguments or {})
