"""The stdio transport's line reader (basic/transports/stdio.mdx: one message per line),
which never holds more than the size limit of one line."""

from __future__ import annotations

import io

from django_mcp.stdio.transport import OVERSIZED, bounded_lines


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


def test_a_longer_line_is_oversized_and_the_next_line_is_intact():
    stream = CountingStream(b"a" * 1_000_000 + b"\nnext\n" + b"b" * 11)
    assert list(bounded_lines(stream, 10)) == [OVERSIZED, b"next\n", OVERSIZED]


def test_no_read_asks_for_more_than_the_limit_or_the_discard_chunk():
    stream = CountingStream(b"a" * 1_000_000 + b"\n")
    list(bounded_lines(stream, 100))
    assert 0 < stream.largest <= 64 * 1024
