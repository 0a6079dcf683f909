"""Reading the stdio transport's input: one message per line (basic/transports/stdio.mdx),
none held longer than ``MAX_REQUEST_BYTES``.

A line over the limit is read no further than that: its rest is discarded up to the next
newline, so one endless line cannot take the process's memory. It stands as an
:class:`OversizedLine`, with the ``id`` its beginning shows (:func:`leading_id`), which
:mod:`.transport` answers with ``RequestTooLarge``.

The command reads stdin through a :class:`StoppableInput`: SIGTERM ends the input (as
closing stdin does) by making it read as ended, not by raising an exception in the thread
that reads it, which would come out wherever that thread is: in the middle of a line just
read, or of a request waiting for a worker, which would then never be answered.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Final, final

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.leading_id import leading_id

if TYPE_CHECKING:
    from collections.abc import Iterator

    from _typeshed import WriteableBuffer

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


class StoppableInput(io.RawIOBase):
    """A file descriptor read as a raw stream (wrap it in ``io.BufferedReader``) that reads
    as ended once :meth:`stop` is called, even while a read waits for the client.

    :meth:`stop` is meant for a signal handler: it sets a flag and writes a byte to a pipe
    of its own, which wakes a read waiting (``poll``) on the descriptor and that pipe; no
    exception, so no line already read is lost. What the buffer holds already is still
    read; nothing more is taken from the descriptor. Where ``select.poll`` is missing
    (Windows, which has no SIGTERM to catch), reads go straight to the descriptor.
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._stopped = False
        # The wake-up pipe only where poll() can wait on it: os.set_blocking on a pipe is
        # POSIX-only before Python 3.12, so Windows on 3.11 must never reach it.
        self._poll: select.poll | None = None
        self._wake: tuple[int, int] | None = None
        if hasattr(select, "poll"):
            wake_r, wake_w = os.pipe()
            os.set_blocking(wake_w, False)
            self._wake = (wake_r, wake_w)
            self._poll = select.poll()
            self._poll.register(fd, select.POLLIN)
            self._poll.register(wake_r, select.POLLIN)

    def readable(self) -> bool:
        return True

    def stop(self) -> None:
        """Read no more: safe in a signal handler (no lock is taken)."""
        self._stopped = True
        if self._wake is not None:
            with contextlib.suppress(OSError):  # the pipe is full: a read is woken already
                os.write(self._wake[1], b"\0")

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Wait until the descriptor has data (or ends), or :meth:`stop` is called."""
        if self._poll is not None and not self._stopped:
            self._poll.poll()  # a signal handler runs in it (PEP 475), then it goes on
        if self._stopped:
            return 0
        view = memoryview(buffer).cast("B")
        data = os.read(self._fd, len(view))
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        """Close the descriptor and the wake-up pipe."""
        if not self.closed:
            for fd in (self._fd, *(self._wake or ())):
                with contextlib.suppress(OSError):
                    os.close(fd)
        super().close()
