"""Reading the stdio transport's input: one message per line (basic/transports/stdio.mdx),
none held longer than ``MAX_REQUEST_BYTES``.

A line over the limit is read no further than that: its rest is discarded up to the next
newline, so one endless line cannot take the process's memory. It stands as an
:class:`OversizedLine`, with the ``id`` its beginning shows (:func:`leading_id`), which
:mod:`.transport` answers with ``RequestTooLarge``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Final, final

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.leading_id import leading_id

if TYPE_CHECKING:
    from collections.abc import Iterator

#: How much of an over-long line's rest is read (and dropped) at a time.
_DISCARD_CHUNK: Final = 64 * 1024


@final
@dataclass(frozen=True, slots=True)
class OversizedLine:
    """Stands for a line longer than the limit, whose bytes were discarded unread but for
    its beginning, where its ``id`` was looked for (:func:`leading_id`)."""

    request_id: jsonrpc.RequestId | None


def bounded_lines(stream: IO[bytes], limit: int) -> Iterator[bytes | OversizedLine]:
    """The lines of ``stream`` until it ends, each holding at most ``limit`` bytes before
    its line ending (``\\n`` or ``\\r\\n``, which it keeps); a longer one is an
    :class:`OversizedLine`, and at most ``limit + 2`` bytes of it are ever held: the rest
    is read in small chunks and dropped up to its newline."""
    while True:
        line = stream.readline(limit + 2)
        if not line:
            return
        if _content_length(line) <= limit:
            yield line
            continue
        oversized = OversizedLine(leading_id(line))
        while not line.endswith(b"\n"):
            line = stream.readline(_DISCARD_CHUNK)
            if not line:
                break
        yield oversized


def _content_length(line: bytes) -> int:
    """How many bytes of ``line`` come before its line ending."""
    if line.endswith(b"\r\n"):
        return len(line) - 2
    return len(line) - 1 if line.endswith(b"\n") else len(line)
