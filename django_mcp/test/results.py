"""Typed answers of the test clients, and the errors they raise.

Protocol errors (a JSON-RPC error response, whatever its HTTP status) raise
:class:`MCPClientError`; a tool that failed (``isError: true``) is a normal
:class:`ToolCallResult` with ``is_error`` set, because that is a result the model reads,
not a failure of the protocol (server/tools.mdx "Error Handling"). An ``input_required``
result that the client cannot answer raises :class:`InputRequiredError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class MCPClientError(Exception):
    """A JSON-RPC error response: ``code``, ``message`` and ``data`` as the server sent
    them, and the HTTP status it came with (None off HTTP)."""

    def __init__(
        self, code: int, message: str, data: Any = None, http_status: int | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    @classmethod
    def from_response(cls, message: dict[str, Any], http_status: int | None) -> MCPClientError:
        error = message.get("error") or {}
        return cls(error.get("code", 0), error.get("message", ""), error.get("data"), http_status)


class InputRequiredError(Exception):
    """The server asked for input (basic/patterns/mrtr.mdx) that no ``answer=`` supplied."""

    def __init__(self, input_requests: dict[str, Any], request_state: str | None) -> None:
        keys = ", ".join(sorted(input_requests)) or "(none)"
        super().__init__(f"the server asked for input the client was not given: {keys}")
        self.input_requests = input_requests
        self.request_state = request_state


def _texts(blocks: list[dict[str, Any]]) -> str:
    return "".join(block["text"] for block in blocks if isinstance(block.get("text"), str))


@dataclass(frozen=True)
class ToolCallResult:
    """A ``CallToolResult``. (Not named ``ToolResult``: that is what a tool returns.)"""

    content: list[dict[str, Any]]
    structured: Any
    is_error: bool
    raw: dict[str, Any]
    #: Notifications (progress, log messages) that came on the reply's stream, in order.
    notifications: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text of every text block, joined."""
        return _texts(self.content)

    @classmethod
    def from_result(
        cls, result: dict[str, Any], notifications: list[dict[str, Any]]
    ) -> ToolCallResult:
        return cls(
            content=list(result.get("content") or []),
            structured=result.get("structuredContent"),
            is_error=result.get("isError") is True,
            raw=result,
            notifications=notifications,
        )


@dataclass(frozen=True)
class ReadResourceResult:
    """A ``ReadResourceResult``: its ``contents`` (text or blob entries)."""

    contents: list[dict[str, Any]]
    raw: dict[str, Any]
    notifications: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text of every text entry, joined."""
        return _texts(self.contents)


@dataclass(frozen=True)
class PromptResult:
    """A ``GetPromptResult``: its messages and optional description."""

    messages: list[dict[str, Any]]
    description: str | None
    raw: dict[str, Any]
    notifications: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class CompletionResult:
    """A ``CompleteResult``: the suggested values, and how many there are in all."""

    values: list[str]
    total: int | None
    has_more: bool
    raw: dict[str, Any]


@dataclass(frozen=True)
class DiscoverResult:
    """A ``DiscoverResult``."""

    supported_versions: list[str]
    capabilities: dict[str, Any]
    instructions: str | None
    server_info: dict[str, Any] | None
    raw: dict[str, Any]
