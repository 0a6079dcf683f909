"""The protocol side of the test clients, free of I/O: each operation is a generator that
yields the :class:`Outgoing` messages it needs sent and receives each :class:`Incoming`
reply, so the sync and async clients share every rule and differ only in how they POST.

It follows cursors (``tools/list`` and friends), learns a tool's ``x-mcp-header``
arguments from its listing (so ``Mcp-Param-*`` headers mirror the arguments), and answers
``input_required`` results by retrying with ``inputResponses`` and the echoed
``requestState`` under a new id (basic/patterns/mrtr.mdx).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeAlias, TypeVar

from django_mcp.protocol.meta import SERVER_INFO_KEY
from django_mcp.test import results as r
from django_mcp.test import wire

T = TypeVar("T")

#: An answer to input requests: ``{key: response}``, or a callable
#: ``(key, input_request) -> response`` where ``input_request`` is ``{method, params}``.
Answer: TypeAlias = Mapping[str, Any] | Callable[[str, dict[str, Any]], Any]
#: Rounds of ``input_required`` one call may go through before the client gives up.
MAX_INPUT_ROUNDS: Final = 10
#: Pages a list may have before the client refuses to follow more cursors.
MAX_PAGES: Final = 1000


@dataclass(frozen=True)
class Outgoing:
    """One message to POST: its body, and the headers that mirror it."""

    message: dict[str, Any]
    headers: dict[str, str]

    @property
    def body(self) -> bytes:
        return json.dumps(self.message).encode("utf-8")


@dataclass(frozen=True)
class Incoming:
    """What came back: the HTTP status (None off HTTP), the final JSON-RPC message (None
    when there was none, e.g. 202) and the notifications that came before it."""

    status: int | None
    message: dict[str, Any] | None
    notifications: list[dict[str, Any]] = field(default_factory=list)


Operation: TypeAlias = Generator[Outgoing, Incoming, T]


@dataclass(frozen=True)
class Done(Generic[T]):
    """The value an operation ended with."""

    value: T


def step(operation: Operation[T], incoming: Incoming | None = None) -> Outgoing | Done[T]:
    """Advance ``operation`` by one reply (None to start it): the next message to send,
    or :class:`Done` with its value. The clients loop on this and only do the POSTs."""
    try:
        return next(operation) if incoming is None else operation.send(incoming)
    except StopIteration as stop:
        return Done(stop.value)


class ClientCore:
    """Builds requests for one client identity and interprets the replies."""

    def __init__(
        self,
        *,
        protocol_version: str = wire.PROTOCOL_VERSION,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
    ) -> None:
        self.protocol_version = protocol_version
        self.capabilities = dict(
            wire.DEFAULT_CAPABILITIES if capabilities is None else capabilities
        )
        self.client_info = dict(client_info or wire.DEFAULT_CLIENT_INFO)
        self._ids = itertools.count(1)
        self._tool_headers: dict[str, dict[str, str]] = {}

    def outgoing(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        notification: bool = False,
    ) -> Outgoing:
        """A request (or notification) with ``_meta`` and its mirrored headers."""
        body_params = dict(params or {})
        body_params["_meta"] = wire.request_meta(
            self.protocol_version, self.capabilities, self.client_info, meta
        )
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": body_params}
        if not notification:
            message["id"] = next(self._ids)
        param_headers = (
            self._tool_headers.get(body_params.get("name", ""))
            if (method == "tools/call")
            else None
        )
        mirrored = wire.mirrored_headers(message, param_headers)
        return Outgoing(message, {**mirrored, **(headers or {})})

    def reply(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Operation[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """Send one request; return its result and the notifications before it, or
        raise :class:`~.results.MCPClientError`."""
        incoming = yield self.outgoing(method, params, meta=meta, headers=headers)
        message = incoming.message
        if message is None or not isinstance(message, dict):
            raise r.MCPClientError(
                0, f"no JSON-RPC response (HTTP {incoming.status})", None, incoming.status
            )
        if "error" in message:
            raise r.MCPClientError.from_response(message, incoming.status)
        result = message.get("result")
        if not isinstance(result, dict):
            raise r.MCPClientError(0, "the response has no result object", message, incoming.status)
        return result, incoming.notifications

    def answered(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        answer: Answer | None = None,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Operation[tuple[dict[str, Any], list[dict[str, Any]]]]:
        """:meth:`reply`, retried with the answers while the server asks for input."""
        attempt = dict(params)
        notes: list[dict[str, Any]] = []
        for _ in range(MAX_INPUT_ROUNDS):
            result, round_notes = yield from self.reply(method, attempt, meta=meta, headers=headers)
            notes.extend(round_notes)
            if result.get("resultType") != "input_required":
                return result, notes
            asked: dict[str, Any] = dict(result.get("inputRequests") or {})
            state = result.get("requestState")
            responses = _answers(asked, answer, state)
            attempt = dict(params)
            if responses:
                attempt["inputResponses"] = responses
            if isinstance(state, str):
                attempt["requestState"] = state
        raise r.MCPClientError(0, f"still input_required after {MAX_INPUT_ROUNDS} rounds")

    # -- operations: the clients' public methods, each driven by a sync or async POST ---

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Operation[dict[str, Any]]:
        """Any request: its ``result``, or raise :class:`~.results.MCPClientError`."""
        result, _ = yield from self.reply(method, params, meta=meta, headers=headers)
        return result

    def discover(self) -> Operation[r.DiscoverResult]:
        result, _ = yield from self.reply("server/discover")
        return r.DiscoverResult(
            supported_versions=list(result.get("supportedVersions") or []),
            capabilities=dict(result.get("capabilities") or {}),
            instructions=result.get("instructions"),
            server_info=(result.get("_meta") or {}).get(SERVER_INFO_KEY),
            raw=result,
        )

    def list_all(self, method: str, key: str) -> Operation[list[dict[str, Any]]]:
        """Every item of a paginated list, following ``nextCursor`` until a page has none
        (server/utilities/pagination.mdx: a *missing* ``nextCursor`` is the end). A cursor
        is an opaque string, so ``""`` is followed like any other; ``null``, which no
        schema allows, ends the list too."""
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        for _ in range(MAX_PAGES):
            result, _notes = yield from self.reply(method, params)
            items.extend(result.get(key) or [])
            cursor = result.get("nextCursor")
            if cursor is None:
                if method == "tools/list":
                    self._tool_headers = {t["name"]: wire.header_params(t) for t in items}
                return items
            params = {"cursor": cursor}
        raise r.MCPClientError(0, f"{method} had more than {MAX_PAGES} pages")

    def list_tools(self) -> Operation[list[dict[str, Any]]]:
        """Every tool definition, following cursors."""
        return self.list_all("tools/list", "tools")

    def list_resources(self) -> Operation[list[dict[str, Any]]]:
        return self.list_all("resources/list", "resources")

    def list_resource_templates(self) -> Operation[list[dict[str, Any]]]:
        return self.list_all("resources/templates/list", "resourceTemplates")

    def list_prompts(self) -> Operation[list[dict[str, Any]]]:
        return self.list_all("prompts/list", "prompts")

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        answer: Answer | None = None,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        **kw_arguments: Any,
    ) -> Operation[r.ToolCallResult]:
        """``tools/call``; ``meta`` adds ``_meta`` keys (``{"progressToken": 1}``)."""
        if name not in self._tool_headers:  # learn its x-mcp-header arguments once
            yield from self.list_tools()
        params = {"name": name, "arguments": {**(arguments or {}), **kw_arguments}}
        result, notes = yield from self.answered(
            "tools/call", params, answer=answer, meta=meta, headers=headers
        )
        return r.ToolCallResult.from_result(result, notes)

    def read_resource(
        self, uri: str, *, answer: Answer | None = None, meta: Mapping[str, Any] | None = None
    ) -> Operation[r.ReadResourceResult]:
        result, notes = yield from self.answered(
            "resources/read", {"uri": uri}, answer=answer, meta=meta
        )
        return r.ReadResourceResult(list(result.get("contents") or []), result, notes)

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        answer: Answer | None = None,
        meta: Mapping[str, Any] | None = None,
        **kw_arguments: Any,
    ) -> Operation[r.PromptResult]:
        params = {"name": name, "arguments": {**(arguments or {}), **kw_arguments}}
        result, notes = yield from self.answered("prompts/get", params, answer=answer, meta=meta)
        return r.PromptResult(
            list(result.get("messages") or []), result.get("description"), result, notes
        )

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> Operation[r.CompletionResult]:
        """``completion/complete``; ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``."""
        params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        result, _ = yield from self.reply("completion/complete", params)
        completion = result.get("completion") or {}
        return r.CompletionResult(
            values=list(completion.get("values") or []),
            total=completion.get("total"),
            has_more=bool(completion.get("hasMore")),
            raw=result,
        )

    # -- subscriptions/listen: a stream, read by each client its own way -----------------

    def listen_request(
        self, notifications: Mapping[str, Any] | None = None, **filters: Any
    ) -> Outgoing:
        """The ``subscriptions/listen`` request for these filters
        (``listen_request(toolsListChanged=True)``)."""
        wanted = {**(notifications or {}), **filters}
        return self.outgoing("subscriptions/listen", {"notifications": wanted})


def listen_refused(incoming: Incoming) -> r.MCPClientError:
    """The error to raise when ``subscriptions/listen`` was answered without a stream."""
    if incoming.message is not None and "error" in incoming.message:
        return r.MCPClientError.from_response(incoming.message, incoming.status)
    return r.MCPClientError(0, f"no stream (HTTP {incoming.status})", None, incoming.status)


def _answers(asked: dict[str, Any], answer: Answer | None, state: Any) -> dict[str, Any]:
    if not asked:
        return {}
    if answer is None:
        raise r.InputRequiredError(asked, state if isinstance(state, str) else None)
    if callable(answer):
        return {key: answer(key, request) for key, request in asked.items()}
    missing = {key: request for key, request in asked.items() if key not in answer}
    if missing:
        raise r.InputRequiredError(missing, state if isinstance(state, str) else None)
    return {key: answer[key] for key in asked}
