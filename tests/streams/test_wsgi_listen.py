"""Listen streams under a real gunicorn: they can never stall the server.

basic/patterns/subscriptions.mdx: a listen stream stays open until the client leaves or the
server ends it. Under WSGI each open stream holds a worker thread, so a process holds at
most ``LISTEN_WSGI_STREAMS`` of them (2 here, of the worker's 4 threads), a worker that
serves one request at a time (gunicorn sync) holds none, and every stream ends by itself
after ``LISTEN_MAX_SECONDS`` with its closing result. Ordinary requests keep being
answered: each assertion is that a ``tools/call`` completes within the client's bounded
timeout, never a measured duration.
"""

from __future__ import annotations

import json
import socket
import time
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

import pytest

from tests.live import GUNICORN_THREADS

from . import sse
from .conftest import serve_streams
from .remote import (
    STREAMS,
    call,
    change,
    headers_for,
    listen,
    listening,
    message,
    post,
    result,
    stream,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.live import LiveServer

WSGI_STREAMS = 2
LIFETIME_SECONDS = 1.0

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def gthread(streams_workdir: Path, sqlite_template: Path) -> Iterator[LiveServer]:
    """One threaded gunicorn worker that may hold two listen streams (in-memory layer)."""
    assert WSGI_STREAMS < GUNICORN_THREADS
    with serve_streams(
        "gunicorn",
        streams_workdir,
        sqlite_template,
        database="gthread",
        STREAMS_LISTEN_WSGI_STREAMS=str(WSGI_STREAMS),
    ) as server:
        yield server


@pytest.fixture(scope="module")
def quiet(streams_workdir: Path, sqlite_template: Path) -> Iterator[LiveServer]:
    """The same with keep-alives a minute apart: nothing but an event wakes a stream."""
    with serve_streams(
        "gunicorn",
        streams_workdir,
        sqlite_template,
        STREAMS_LISTEN_WSGI_STREAMS=str(WSGI_STREAMS),
        STREAMS_KEEPALIVE_SECONDS="60",
        database="gthread",
    ) as server:
        yield server


@pytest.fixture(scope="module")
def short_lived(streams_workdir: Path, sqlite_template: Path) -> Iterator[LiveServer]:
    """The same, its streams living one second."""
    with serve_streams(
        "gunicorn",
        streams_workdir,
        sqlite_template,
        STREAMS_LISTEN_WSGI_STREAMS=str(WSGI_STREAMS),
        STREAMS_LISTEN_MAX_SECONDS=str(LIFETIME_SECONDS),
        database="short_lived",
    ) as server:
        yield server


@pytest.fixture(scope="module")
def sync_worker(streams_workdir: Path, sqlite_template: Path) -> Iterator[LiveServer]:
    """One gunicorn sync worker (one request at a time), listen enabled in the settings."""
    with serve_streams(
        "gunicorn-sync",
        streams_workdir,
        sqlite_template,
        STREAMS_LISTEN_WSGI_STREAMS=str(WSGI_STREAMS),
        database="sync_worker",
    ) as server:
        yield server


def refused(server: LiveServer) -> dict[str, object]:
    response = post(server.url(STREAMS), listen({"toolsListChanged": True}, id="over"))
    assert response.status_code == 503, (response.status_code, response.text)
    assert response.headers["retry-after"]
    error: dict[str, object] = response.json()["error"]
    assert error["code"] == -31000
    return error


def test_streams_up_to_the_limit_leave_tools_calls_answered_and_one_more_is_refused(
    gthread: LiveServer,
):
    """With the WSGI limit of streams open, a tools/call is answered and a further listen
    is refused (503, -31000) before any stream opens."""
    with ExitStack() as streams:
        for number in range(WSGI_STREAMS):
            streams.enter_context(listening(gthread, {"toolsListChanged": True}, id=number))

        assert call(gthread, "notify", {"kind": "prompts"}) == "sent"
        assert refused(gthread)["data"] == {"limit": "wsgi"}
        assert call(gthread, "notify", {"kind": "prompts"}) == "sent"


def test_a_change_made_in_another_thread_reaches_the_stream(quiet: LiveServer):
    """basic/patterns/subscriptions.mdx: changes are sent "as changes happen". The tool
    that publishes runs in another thread of the worker than the stream; the in-memory
    channel layer does not wake the stream's loop, which still sees the event within its
    poll interval, long before its next keep-alive (60 s here)."""
    with listening(quiet, {"toolsListChanged": True}) as (_, reader):
        assert call(quiet, "notify", {"kind": "tools"}) == "sent"

        note = change(reader)

    assert note["method"] == "notifications/tools/list_changed"


def test_a_stream_whose_client_hangs_up_gives_its_place_back(quiet: LiveServer):
    """basic/patterns/subscriptions.mdx: a listen stream stays open "until the client
    disconnects". Under gunicorn the stream sees its client's socket close at its next
    poll and ends, freeing its thread and its place in the limits. Before, it waited for
    a keep-alive write to fail (a minute here), so a client that closed and reopened
    streams was refused once the limit's worth of closed streams were still counted (the
    conformance suite's flake, from one address: 429 after five)."""
    for number in range(3 * WSGI_STREAMS):
        with listening_again(quiet, id=number):
            pass  # acknowledged, then the connection is closed
    with ExitStack() as streams:  # and the whole limit is free again
        for number in range(WSGI_STREAMS):
            streams.enter_context(listening_again(quiet, id=f"last-{number}"))


def test_a_client_that_only_shut_its_sending_side_still_gets_changes(quiet: LiveServer):
    """A client may send its request, shut down its sending side (``nc -N``) and go on
    reading: end-of-file alone is not a hang-up. The stream answers it with a keep-alive
    (a closed client would reset), then delivers the change as to any listener."""
    body = listen({"toolsListChanged": True}, id="half")
    payload = json.dumps(body).encode()
    head = "".join(f"{name}: {value}\r\n" for name, value in headers_for(body).items())
    host, port = quiet.url("/").split("//")[1].split("/")[0].split(":")
    request = (
        f"POST {STREAMS} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(payload)}\r\n"
        f"{head}\r\n".encode()
        + payload
    )
    give_up = time.monotonic() + 15  # earlier tests' closed streams are let go of first
    with ExitStack() as held:
        while True:
            client = held.enter_context(socket.create_connection((host, int(port)), timeout=10))
            client.sendall(request)
            client.shutdown(socket.SHUT_WR)
            received = b""
            while b"\r\n\r\n" not in received:
                chunk = client.recv(65536)
                assert chunk, f"closed before the headers: {received!r}"
                received += chunk
            if not received.startswith(b"HTTP/1.1 503"):
                break
            assert time.monotonic() < give_up, "no place for the stream"
            client.close()
            time.sleep(0.1)
        assert received.startswith(b"HTTP/1.1 200"), received
        while b"acknowledged" not in received:
            chunk = client.recv(65536)
            assert chunk, f"the stream ended: {received!r}"
            received += chunk
        assert call(quiet, "notify", {"kind": "tools"}) == "sent"
        while b"notifications/tools/list_changed" not in received:
            chunk = client.recv(65536)
            assert chunk, f"the stream ended: {received!r}"
            received += chunk
    assert b": keep-alive" in received


@contextmanager
def listening_again(server: LiveServer, *, id: Any, patience: float = 15.0) -> Iterator[None]:
    """An acknowledged listen stream, once the server has let go of those whose clients
    hung up: it notices at a stream's next poll, so a refusal (503, the WSGI limit) is
    tried again until ``patience`` runs out, long before a keep-alive would free a place."""
    give_up = time.monotonic() + patience
    while True:
        with stream(server.url(STREAMS), listen({"toolsListChanged": True}, id=id)) as (
            response,
            reader,
        ):
            if response.status_code == 200:
                ack = reader.message()
                assert ack["method"] == "notifications/subscriptions/acknowledged"
                yield
                return
            assert response.status_code == 503, response.status_code
            assert time.monotonic() < give_up, "closed streams kept their places"
        time.sleep(0.1)


def test_a_stream_ends_by_itself_at_its_lifetime(short_lived: LiveServer):
    """After ``LISTEN_MAX_SECONDS`` the server sends the listen request's result, then
    closes (the read ends): the worker thread is free again, and so is the stream's place,
    once more than the limit of streams have come and gone."""
    for number in range(WSGI_STREAMS + 1):
        with listening(short_lived, {"toolsListChanged": True}, id=number) as (_, reader):
            closing = reader.message(deadline=LIFETIME_SECONDS + 10)
            rest = reader.rest()
        sse.check_message(closing, "subscriptions/listen")
        assert closing["id"] == number
        assert all(frame.is_comment for frame in rest)


def discovered_notifications(server: LiveServer) -> dict[str, object]:
    """The capabilities of ``server/discover`` that promise listen notifications."""
    capabilities = result(server.url(STREAMS), message("server/discover"))["capabilities"]
    return {name: capabilities[name] for name in ("tools", "resources", "prompts")}


def test_discover_offers_notifications_only_where_a_stream_can_be_held(
    sync_worker: LiveServer, gthread: LiveServer
):
    """basic/patterns/subscriptions.mdx: ``listChanged`` and ``subscribe`` promise
    notifications, which only a listen stream carries (a server that cannot listen may
    answer -32601 only when it advertises neither). A sync worker refuses every stream,
    so its discover result leaves both out; a threaded worker that may hold streams
    offers them."""
    assert discovered_notifications(sync_worker) == {"tools": {}, "resources": {}, "prompts": {}}
    assert discovered_notifications(gthread) == {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": True},
    }


def test_a_sync_worker_refuses_listen_and_keeps_answering(sync_worker: LiveServer):
    """A gunicorn sync worker serves one request at a time: one listen stream would hold
    the whole server, so it is refused, and the next tools/call is answered."""
    assert refused(sync_worker)["data"] == {"limit": "wsgi-single-threaded"}
    assert call(sync_worker, "notify", {"kind": "prompts"}) == "sent"
