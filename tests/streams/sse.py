"""Reading SSE response streams in tests, and checking each message against the schema.

:func:`parse` splits a complete body (the WSGI path, or a stream read to its end) into
frames; :class:`EventReader` reads frames from a live ``httpx`` streaming response with an
overall deadline, so a silent or chatty server can never hang a test.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tests.helpers import RESULT_TYPES, assert_valid

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    import httpx

CONTENT_TYPE = "text/event-stream"

#: Notification method -> its type in schema.json.
NOTIFICATION_TYPES = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
}
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
DEFAULT_DEADLINE = 15.0  # a ceiling, as remote.READ_TIMEOUT


def closing(id: Any) -> dict[str, Any]:
    """The listen request's result, which a stream the server ends sends last: its
    ``_meta`` has the subscription id and, like every result's, ``serverInfo``."""
    from django_mcp.conf import mcp_settings
    from django_mcp.protocol.meta import SERVER_INFO_KEY

    info = {"name": mcp_settings.SERVER_NAME, "version": mcp_settings.server_version}
    if mcp_settings.SERVER_TITLE:
        info["title"] = mcp_settings.SERVER_TITLE
    meta = {SUBSCRIPTION_ID_KEY: id, SERVER_INFO_KEY: info}
    return {"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "_meta": meta}}


@dataclass(frozen=True)
class Frame:
    """One SSE frame: a comment line (``message`` is None) or one JSON-RPC message."""

    raw: str
    message: dict[str, Any] | None = None

    @property
    def is_comment(self) -> bool:
        return self.message is None


def frames_from_lines(lines: Iterable[str]) -> Iterator[Frame]:
    """SSE frames from text lines (without line ends); refuses ``id:`` lines."""
    data: list[str] = []
    for line in lines:
        if line.startswith(":"):
            yield Frame(line)
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "":
            if data:
                text = "\n".join(data)
                data = []
                yield Frame(text, json.loads(text))
        else:
            field, _, value = line.partition(":")
            assert field == "event", line  # no id: or retry: lines (streams are not resumable)
            assert value.strip() == "message", line
    assert not data, f"unterminated SSE event: {data!r}"


def parse(body: bytes) -> list[Frame]:
    """Every frame of a complete SSE body."""
    return list(frames_from_lines(body.decode("utf-8").splitlines()))


def messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a complete SSE body (comments left out)."""
    return [frame.message for frame in parse(body) if frame.message is not None]


class EventReader:
    """Frames from a streaming ``httpx`` response, each read bounded by a deadline."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._frames = frames_from_lines(response.iter_lines())
        self.comments = 0

    def frame(self, deadline: float = DEFAULT_DEADLINE) -> Frame:
        """The next frame; the client's read timeout bounds one silent wait."""
        started = time.monotonic()
        frame = next(self._frames)
        assert time.monotonic() - started <= deadline + 1, "frame took too long"
        if frame.is_comment:
            self.comments += 1
        return frame

    def message(self, deadline: float = DEFAULT_DEADLINE) -> dict[str, Any]:
        """The next JSON-RPC message, skipping keep-alive comments, within ``deadline``."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            frame = self.frame(deadline)
            if frame.message is not None:
                return frame.message
        raise AssertionError(f"no message within {deadline} s ({self.comments} comments)")

    def rest(self) -> list[Frame]:
        """Every remaining frame, up to the end of the stream."""
        return list(self._frames)


def check_message(message: dict[str, Any], method: str | None = None) -> None:
    """Validate one message of a response stream against schema.json.

    A notification is checked against its own type; a response against the result type of
    ``method`` (the request's method), or ``SubscriptionsListenResultResponse`` for listen.
    """
    assert message.get("jsonrpc") == "2.0", message
    assert "id" not in message or "method" not in message, message
    if "method" in message:
        assert "id" not in message, f"a server never sends requests on a stream: {message}"
        assert_valid(message, NOTIFICATION_TYPES[message["method"]])
        return
    if "error" in message:
        assert_valid(message, "JSONRPCErrorResponse")
        return
    if method == "subscriptions/listen":
        assert_valid(message, "SubscriptionsListenResultResponse")
        return
    assert_valid(message, "JSONRPCResultResponse")
    if method in RESULT_TYPES:
        assert_valid(message, RESULT_TYPES[method][0])
