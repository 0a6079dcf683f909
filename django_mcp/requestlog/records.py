"""What the request log stores about one HTTP exchange, independent of how it is stored.

The middleware (an adapter) builds a :class:`RequestRecord` after each response and hands it
to :func:`django_mcp.requestlog.recorder.submit`, which buffers and writes in bulk off the
request path.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Final, Literal, NamedTuple, TypeAlias

Outcome = Literal["ok", "tool_error", "protocol_error", "notification"]

#: A record's values as a plain ``tuple``, in :class:`RequestRecord`'s field order: how the
#: recorder buffers a record and hands it to the writer and the summaries. Why not the
#: named tuple: the cyclic garbage collector stops tracking a plain tuple of plain values
#: the first time it sees one, never an instance of a class (see
#: :func:`~django_mcp.requestlog.recorder.submit` and ``recorder.flush``).
Row: TypeAlias = tuple[Any, ...]


class RequestRecord(NamedTuple):
    """One row of the log, as plain values, in the columns' order: the writer sends the
    record itself as the row (no per-record ``attrgetter`` of 21 fields), and the
    recorder buffers its values as a plain tuple, which the garbage collector stops
    tracking (see :func:`~django_mcp.requestlog.recorder.submit`). Immutable: the
    sanitiser replaces a field with ``_replace``.
    """

    started_at: datetime.datetime
    site: str
    method: str
    target: str
    request_id: str
    declared_revision: str
    served_revision: str
    served_how: str  # "supported", "best-effort", or "" when not admitted
    client_name: str
    client_version: str
    user_id: int | None
    username: str
    outcome: Outcome
    error_code: int | None
    http_status: int
    duration_ms: float
    params: str | None = None
    #: The JSON-RPC error message as sent to the client (internal errors are masked).
    error_message: str = ""
    #: The named declaration exists but the caller's permissions hide it (log only).
    permission_denied: bool = False
    #: The client address and User-Agent (``REQUEST_LOG_REMOTE_ADDR``/``_USER_AGENT``).
    remote_addr: str | None = None
    user_agent: str = ""

    @property
    def is_error(self) -> bool:
        return is_error(self)


#: Where each field sits in a :data:`Row`: for the code that reads plain tuples.
FIELD_INDEX: Final = {name: index for index, name in enumerate(RequestRecord._fields)}
_OUTCOME: Final = FIELD_INDEX["outcome"]
_HTTP_STATUS: Final = FIELD_INDEX["http_status"]


def is_error(record: Row) -> bool:
    """Whether ``record`` (a :class:`RequestRecord` or its :data:`Row`) is an error: a
    tool error, a protocol error or an HTTP error (what ``REQUEST_LOG = "errors"`` keeps)."""
    return record[_OUTCOME] in ("tool_error", "protocol_error") or record[_HTTP_STATUS] >= 400


#: Built once: ``json.dumps`` with any option builds an encoder per call (about 0.9 µs).
_PARAMS_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def truncated_params(params: Any, max_chars: int) -> str:
    """Params as JSON, cut to ``max_chars`` (logging them is opt-in: they may hold PII)."""
    text = _PARAMS_ENCODER.encode(params)
    return text if len(text) <= max_chars else text[: max(0, max_chars - 1)] + "…"
