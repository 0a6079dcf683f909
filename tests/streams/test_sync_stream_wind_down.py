"""A sync listen stream's loop (WSGI, stdio) lets a slow cancelled ``receive`` finish
(django_mcp/listen/inbox.py, ``iterated``).

:meth:`Inbox.close` waits for its cancelled ``receive`` a second at most, so that a
stream's end never waits on a channel layer: channels_redis's blocking pop, cancelled
after Redis restarted, took seconds to end. Under WSGI and stdio the stream's own loop was
then closed at once, the receive destroyed as pending ("Task was destroyed but it is
pending") and its connection never cleaned up. The loop now winds down in its own thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncGenerator

import pytest

from django_mcp.listen.inbox import iterated


async def stubborn(cleaned: threading.Event) -> None:
    """A receive that ends 1.5 s after it is first cancelled, whatever else cancels it."""
    loop = asyncio.get_running_loop()
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(3600)
        deadline = loop.time() + 1.5
        while loop.time() < deadline:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(deadline - loop.time())
    finally:
        cleaned.set()


async def frames(cleaned: threading.Event) -> AsyncGenerator[bytes, None]:
    receiving = asyncio.ensure_future(stubborn(cleaned))
    try:
        yield b"first"
        await asyncio.Event().wait()
    finally:
        receiving.cancel()
        await asyncio.wait({receiving}, timeout=0.2)  # as Inbox.close: a bounded wait


def test_a_slow_cancelled_receive_finishes_after_the_stream_ended(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """basic/utilities/subscriptions.mdx: the stream ends when the client leaves; the
    caller returns at once, and the receive still ends and cleans up."""
    cleaned = threading.Event()
    stream = iterated(frames(cleaned))
    assert next(stream) == b"first"

    started = time.monotonic()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        stream.close()
        ended_after = time.monotonic() - started
        assert cleaned.wait(10), "the receive was destroyed as pending, never cleaned up"
        time.sleep(0.2)  # the loop closes in its thread

    assert ended_after < 1.0
    assert "destroyed but it is pending" not in caplog.text
