"""Server-Sent Events framing for MCP response streams (basic/transports/streamable-http.mdx).

One JSON-RPC message per event, as a single ``data:`` line of compact JSON followed by a
blank line; no ``id:`` lines (2026-07-28 streams are not resumable). Keep-alives are SSE
comment lines.
"""

from __future__ import annotations

from typing import Any, Final

from .jsonrpc import dumps

CONTENT_TYPE: Final = "text/event-stream"
KEEP_ALIVE: Final = b": keep-alive\n\n"


def event(message: dict[str, Any]) -> bytes:
    """One SSE event carrying ``message``."""
    return b"data: " + dumps(message) + b"\n\n"


#: The ranges that match text/event-stream, most specific first.
_RANGES: Final = (CONTENT_TYPE, "text/*", "*/*")


def accepts_event_stream(accept: str | None) -> bool:
    """Whether an ``Accept`` header admits ``text/event-stream``: the most specific range
    that matches decides, and ``q=0`` refuses (RFC 9110 section 12.5.1)."""
    if not accept:
        return False
    matches: dict[str, bool] = {}
    for item in accept.split(","):
        media, *parameters = (part.strip().lower() for part in item.split(";"))
        if media in _RANGES:
            matches[media] = not _refused(parameters)
    for media in _RANGES:
        if media in matches:
            return matches[media]
    return False


def refuses_event_stream(accept: str | None) -> bool:
    """Whether an ``Accept`` header is present and excludes ``text/event-stream``. A
    request without one refuses nothing (RFC 9110: any media type will do), so only a
    client that said what it takes, and left SSE out, must never be sent a stream."""
    return bool(accept and accept.strip()) and not accepts_event_stream(accept)


def _refused(parameters: list[str]) -> bool:
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip() == "q":
            try:
                return float(value.strip()) == 0
            except ValueError:
                return False
    return False
