"""The stdio transport's line reader (basic/transports/stdio.mdx: one message per line,
newline-delimited), which never holds more than the size limit of one line."""

from __future__ import annotations

import io
import os
import select
import threading

import pytest

from django_mcp.stdio.lines import OversizedLine, StoppableInput, bounded_lines


class CountingStream(io.BytesIO):
    """A stream that remembers the largest read asked of it."""

    largest = 0

    def readline(self, size: int | None = -1) -> bytes:
        if size is None or size <= 0:
            raise AssertionError("an unbounded read")
        self.largest = max(self.largest, size)
        return super().readline(size)


def test_lines_within_the_limit_are_yielded_whole():
    stream = CountingStream(b"12345\n1234567890\nabc")
    assert list(bounded_lines(stream, 10)) == [b"12345\n", b"1234567890\n", b"abc"]


def test_the_limit_counts_the_message_not_its_line_ending():
    """A message of exactly the limit is accepted whether the line ends in LF or CRLF."""
    stream = CountingStream(b"1234567890\r\n1234567890\n12345678901\r\n")
    assert list(bounded_lines(stream, 10)) == [
        b"1234567890\r\n",
        b"1234567890\n",
        OversizedLine(None),
    ]


def test_a_longer_line_is_oversized_and_the_next_line_is_intact():
    stream = CountingStream(b"a" * 1_000_000 + b"\nnext\n" + b"b" * 11)
    assert list(bounded_lines(stream, 10)) == [OversizedLine(None), b"next\n", OversizedLine(None)]


def test_an_oversized_request_keeps_the_id_its_beginning_shows():
    line = b'{"jsonrpc":"2.0","id":"r-7","method":"tools/call","params":{"x":"' + b"y" * 500
    stream = CountingStream(line + b'"}}\n{"jsonrpc":"2.0","id":8}\n')
    assert list(bounded_lines(stream, 100)) == [OversizedLine("r-7"), b'{"jsonrpc":"2.0","id":8}\n']


def test_an_oversized_request_under_the_id_1_0_keeps_it_as_sent():
    """schema.json RequestId: ``1.0`` is an integer (JSON Schema 2020-12), read from the
    line's beginning as the full parse reads it, a float, so the refusal echoes ``1.0``."""
    line = b'{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"x":"' + b"y" * 500
    [oversized] = bounded_lines(CountingStream(line + b'"}}\n'), 100)
    assert isinstance(oversized, OversizedLine)
    assert (oversized.request_id, type(oversized.request_id)) == (1.0, float)


def test_no_read_asks_for_more_than_the_limit_or_the_discard_chunk():
    stream = CountingStream(b"a" * 1_000_000 + b"\n")
    list(bounded_lines(stream, 100))
    assert 0 < stream.largest <= 64 * 1024


def test_an_oversized_response_from_the_client_keeps_no_id():
    """basic/transports/stdio.mdx: the client MUST NOT write JSON-RPC responses, and a
    response it writes anyway is never answered under its id (the id is that of a request
    of the server's, not of the client's: tests/stdio/test_stdio_ids.py). Over the size
    limit, the look at the line's beginning still took its ``id``, so the refusal echoed
    it, and the client read it as the answer to its own request with that id, perhaps one
    still running (basic/index.mdx: an error response carries the id of the request it
    corresponds to; this one corresponds to none)."""
    for member in (b'"result":{"resultType":"complete","x":"', b'"error":{"code":1,"message":"'):
        line = b'{"jsonrpc":"2.0","id":1,' + member + b"y" * 500 + b'"}}\n'
        stream = CountingStream(line + b"next\n")
        assert list(bounded_lines(stream, 100)) == [OversizedLine(None), b"next\n"]


def test_a_stopped_input_reads_as_ended_even_while_a_read_waits() -> None:
    """SIGTERM ends the command's input as closing stdin does, by :meth:`stop` (which a
    signal handler calls) rather than an exception: a read waiting for the client's next
    line returns the end of the input, and the lines read before it are all there."""
    read_end, write_end = os.pipe()
    stream = io.BufferedReader(StoppableInput(read_end))
    try:
        os.write(write_end, b"first\n")
        lines = bounded_lines(stream, 100)
        assert next(lines) == b"first\n"
        timer = threading.Timer(0.2, stream.raw.stop)
        timer.start()
        assert list(lines) == []  # it waited for more, then read as ended
        timer.join()
        os.write(write_end, b"later\n")
        assert stream.readline() == b""  # nothing more is taken from the descriptor
    finally:
        stream.close()
        os.close(write_end)


def test_without_poll_the_input_reads_straight_from_the_descriptor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Windows on Python 3.11 has neither ``select.poll`` nor ``os.set_blocking`` for a
    pipe (POSIX-only before 3.12): ``mcp_stdio`` must still start and read its input there,
    with no wake-up pipe (Windows has no SIGTERM to wake a read for)."""
    monkeypatch.delattr(select, "poll")
    monkeypatch.delattr(os, "set_blocking")
    read_end, write_end = os.pipe()
    stream = io.BufferedReader(StoppableInput(read_end))
    try:
        os.write(write_end, b"first\n")
        os.close(write_end)
        assert list(bounded_lines(stream, 100)) == [b"first\n"]
    finally:
        stream.close()
