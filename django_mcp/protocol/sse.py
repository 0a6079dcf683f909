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


def accepts_event_stream(accept: str | None) -> bool:
    """Whether an ``Accept`` header admits ``text/event-stream``."""
    if not accept:
        return False
    for item in accept.split(","):
        media = item.split(";", 1)[0].strip().lower()
        if media in (CONTENT_TYPE, "text/*", "*/*"):
            return True
    return False
