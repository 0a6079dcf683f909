"""A server shutting down ends open listen streams with the listen result, then closes.

basic/patterns/subscriptions.mdx: when the server ends it (for example at shutdown), it
SHOULD first send the JSON-RPC response to the listen request, then close; a close without
that response tells the client the stream dropped unexpectedly.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import TYPE_CHECKING

import pytest

from django_mcp.listen import shutdown

from . import sse
from .conftest import serve_streams
from .forking import fork_while_held
from .remote import listening

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.live
@pytest.mark.parametrize("kind", ["daphne", "uvicorn"])
def test_sigterm_sends_the_listen_result_before_the_stream_closes(
    kind: str, streams_workdir: Path, sqlite_template: Path
):
    """basic/patterns/subscriptions.mdx: a server ending the stream at shutdown sends the
    JSON-RPC response to the listen request (``resultType: complete`` with the
    subscription id) before it closes; the server process then exits."""
    database = f"shutdown-{kind}"
    with serve_streams(kind, streams_workdir, sqlite_template, database=database) as server:
        with listening(server, {"toolsListChanged": True}, id=41) as (_, reader):
            server.process.send_signal(signal.SIGTERM)
            closing = reader.message(deadline=10)
            rest = reader.rest()
        deadline = time.monotonic() + 10
        while server.is_running() and time.monotonic() < deadline:
            time.sleep(0.05)

        sse.check_message(closing, "subscriptions/listen")
        assert closing == sse.closing(41)
        assert all(frame.is_comment for frame in rest)
        assert not server.is_running(), server.output()


def test_a_signal_that_arrives_while_the_waiters_are_locked_is_handled(
    monkeypatch: pytest.MonkeyPatch,
):
    """The handler runs in the main thread between two bytecodes, perhaps while that thread
    holds the waiters' lock (a stream starting or ending): it must not wait for the lock,
    or the server would hang at shutdown instead of ending its streams. The lock here is
    a fresh one, so that a regression fails this test without hanging the ones after it."""
    monkeypatch.setattr(shutdown, "_lock", threading.Lock())
    monkeypatch.setattr(shutdown, "_stopping", False)
    monkeypatch.setattr(shutdown, "_waiters", set())
    passed_on: list[int] = []
    handle = shutdown._handler(lambda number, frame: passed_on.append(number))

    def signal_inside_the_lock() -> None:
        with shutdown._lock:
            handle(signal.SIGTERM, None)

    worker = threading.Thread(target=signal_inside_the_lock, daemon=True)
    worker.start()
    worker.join(5)

    assert not worker.is_alive(), "the shutdown handler waited for the waiters' lock"
    assert passed_on == [signal.SIGTERM]
    assert shutdown.stopping()


def test_a_forked_child_waits_on_a_lock_of_its_own():
    """A process forked while another thread held the waiters' lock (a stream starting or
    ending) must still open streams: the child's first ``waiter()`` must not wait for a
    lock whose holder does not exist there."""

    def child() -> bool:
        async def open_one() -> None:
            shutdown.waiter().cancel()

        asyncio.run(open_one())
        return True

    status = fork_while_held(shutdown._lock, child)

    assert status == 0, "the child hung on the parent's lock" if status is None else status
