"""Facts about one request that only a deeper layer learns, noted for its log record.

Why: the answer to a name the caller may not use is byte-identical to the answer to a name
that does not exist (a hidden declaration must not be discoverable), so nothing in the
response tells the request log which of the two happened. The registry knows: when it
hides an existing declaration from a caller it notes it here, on the HTTP request that the
:class:`~django_mcp.server.context.Context` carries, and the exchange reads the note when
it builds the record. The note never reaches the wire; a transport without an HTTP request
(stdio, ``mcp_call``) simply has nothing noted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

_ATTRIBUTE: Final = "_django_mcp_log_notes"


@dataclass
class LogNotes:
    """What the log should know beyond the request and the response."""

    #: A named tool, prompt or resource exists but the caller's permissions hide it.
    permission_denied: bool = False


def notes_of(request: Any) -> LogNotes:
    """The notes of ``request`` (an ``HttpRequest``), created on first use."""
    notes: LogNotes | None = getattr(request, _ATTRIBUTE, None)
    if notes is None:
        notes = LogNotes()
        setattr(request, _ATTRIBUTE, notes)
    return notes


def note_permission_denied(context: Any) -> None:
    """Note that ``context``'s caller was refused an existing declaration (a no-op
    without a context or an HTTP request)."""
    request = getattr(context, "request", None)
    if request is not None:
        notes_of(request).permission_denied = True
