"""``MAX_REQUEST_BYTES`` bounds what is read, under ASGI and WSGI, chunked or not.

A body over the limit is refused with HTTP 413 and a JSON-RPC Invalid Request (-32600) with
no id (the body was never parsed; basic/transports/streamable-http.mdx, "Sending Messages
to the Server": the server answers an HTTP error status). A chunked body
(RFC 9112 section 7.1) within the limit is an ordinary request. Under Daphne the server
itself keeps no more of an MCP body than the limit (``django_mcp.http.daphne``; its request
class is tested in ``test_daphne_body.py``).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from django.core.asgi import get_asgi_application

from django_mcp.http.asgi import BodyLimit
from django_mcp.http.native import NativeMCP
from django_mcp.protocol.errors import INVALID_REQUEST, PARSE_ERROR
from tests.helpers import asgi_post_scope, mcp_body, mcp_headers, override_mcp
from tests.live import (
    APPLICATION,
    NATIVE_APPLICATION,
    NATIVE_WSGI_APPLICATION,
    WSGI_APPLICATION,
    live_server,
    migrate,
)

LIMIT = 4096
CHUNK = 1024
CHUNKS = 1000  # a 1 MB body, in 1 KB messages


class FakeServer:
    """The server side of one ASGI request: body messages on demand, responses collected."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.read = 0
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if self.read < len(self.chunks):
            self.read += 1
            more = self.read < len(self.chunks)
            return {"type": "http.request", "body": self.chunks[self.read - 1], "more_body": more}
        await asyncio.Event().wait()  # then only a disconnect, which never comes
        raise AssertionError("unreachable")

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])


def scope(path: str = "/mcp", headers: dict[str, str] | None = None) -> dict[str, Any]:
    body_headers = {"content-type": "application/json", "accept": "application/json"}
    body_headers.update(headers or {})
    encoded = [(k.lower().encode(), v.encode()) for k, v in body_headers.items()]
    return asgi_post_scope(path, encoded, server=("127.0.0.1", 8000))


def serve(application: Any, server: FakeServer, request_scope: dict[str, Any]) -> None:
    asyncio.run(application(request_scope, server.receive, server.send))


@pytest.fixture
def site(mcp_site):
    @mcp_site.tool
    def echo(text: str) -> str:
        return text

    return mcp_site


@pytest.fixture(params=["BodyLimit", "NativeMCP"])
def guard(request: pytest.FixtureRequest) -> Any:
    """The two ASGI wrappers that bound an MCP body: ``BodyLimit`` around Django's path,
    and the native path (``NativeMCP``), which reads the body itself."""
    wrapper = BodyLimit if request.param == "BodyLimit" else NativeMCP
    return wrapper(get_asgi_application())


def test_the_guard_stops_reading_past_the_limit_and_answers_413(site, guard):
    server = FakeServer([b" " * CHUNK] * CHUNKS)
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        serve(guard, server, scope())
    assert server.read == LIMIT // CHUNK + 1  # the message that passed the limit, no more
    assert server.status == 413
    assert json.loads(server.body) == {
        "jsonrpc": "2.0",
        "error": {"code": INVALID_REQUEST, "message": "Request body is too large"},
    }


def test_without_the_guard_django_reads_the_whole_body(site):
    """The finding the guard fixes: Django's ASGI handler reads every message first."""
    server = FakeServer([b" " * CHUNK] * CHUNKS)
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        serve(get_asgi_application(), server, scope())
    assert (server.read, server.status) == (CHUNKS, 413)


def test_a_declared_length_over_the_limit_is_refused_unread(site, guard):
    server = FakeServer([b" " * CHUNK] * CHUNKS)
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        serve(guard, server, scope(headers={
            "content-length": str(CHUNK * CHUNKS)}))  # fmt: skip
    assert (server.read, server.status) == (0, 413)


def test_a_body_within_the_limit_is_served_whole(site, guard):
    body = mcp_body("tools/call", {"name": "echo", "arguments": {"text": "x" * 3000}})
    raw = json.dumps(body).encode()
    server = FakeServer([raw[i : i + 500] for i in range(0, len(raw), 500)])
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        serve(guard, server, scope(headers=mcp_headers(body)))
    assert server.status == 200, server.body
    assert json.loads(server.body)["result"]["content"][0]["text"] == "x" * 3000


def test_the_limit_holds_under_force_script_name(site, guard, settings):
    """With ``FORCE_SCRIPT_NAME`` Django's ASGI handler strips that prefix from the path,
    not the scope's ``root_path``, so ``/app/mcp`` is the MCP endpoint: its body is bounded
    there too, not read whole before the 413 (basic/transports/streamable-http.mdx, "Sending
    Messages to the Server")."""
    settings.FORCE_SCRIPT_NAME = "/app"
    server = FakeServer([b" " * CHUNK] * CHUNKS)
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        serve(guard, server, scope(path="/app/mcp"))
    assert (server.read, server.status) == (LIMIT // CHUNK + 1, 413)


def test_other_paths_are_not_touched(site, guard):
    server = FakeServer([b" " * CHUNK] * 10)
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        serve(guard, server, scope(path="/elsewhere"))
    assert (server.read, server.status) == (10, 404)


# -- real servers ---------------------------------------------------------------------------

LIVE_SETTINGS = "tests.http.limits_settings"
LOGGED_SETTINGS = "tests.http.logged_limits_settings"  # the same limit, request log on
LIVE_LIMIT = 64 * 1024
READ_TIMEOUT = 30.0  # a bound on waiting for an answer, not a measurement
DISCOVER = mcp_body("server/discover")
MEGABYTE = 1 << 20
HUGE_BODY_MB = 200


def chunked_head(port: int, *extra: str) -> bytes:
    """The request line and headers of a chunked POST of ``server/discover`` to /mcp."""
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "Transfer-Encoding: chunked",
        *extra,
        *(f"{name}: {value}" for name, value in mcp_headers(DISCOVER).items()),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode()


def chunked_post(port: int, chunks: list[bytes], *, finish: bool = True) -> tuple[int, bytes]:
    """POST ``chunks`` to /mcp with ``Transfer-Encoding: chunked`` (no Content-Length); with
    ``finish=False`` the closing chunk is never sent, so only a server that stops reading
    early can answer. Returns the status and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT) as sock:
        sock.sendall(chunked_head(port))
        try:
            for chunk in chunks:
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            if finish:
                sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the whole body was sent
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, response.read()


def assert_too_large(status: int, body: bytes) -> None:
    assert status == 413, body[:300]
    assert json.loads(body)["error"]["code"] == INVALID_REQUEST


def peak_rss_kb(pid: int) -> int:
    """The peak resident memory of process ``pid`` so far (``VmHWM``), in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM for process {pid}")


def logged_statuses(database: Path) -> list[int]:
    """The HTTP statuses in the live server's request log, once it has written a 413 (it
    writes from a background thread; bounded polling, as for a server's start)."""
    deadline = time.monotonic() + READ_TIMEOUT
    statuses: list[int] = []
    while 413 not in statuses and time.monotonic() < deadline:
        with closing(sqlite3.connect(database, timeout=READ_TIMEOUT)) as connection:
            rows = connection.execute("SELECT http_status FROM django_mcp_requestlog").fetchall()
        statuses = [status for (status,) in rows]
        time.sleep(0.1)
    return statuses


@pytest.mark.live
def test_daphne_refuses_a_huge_chunked_body_without_holding_it(tmp_path: Path):
    """Under Daphne (``python -m django_mcp.http.daphne``, tests/live.py) a 200 MB chunked
    body over a 64 KB limit gets 413 with the JSON-RPC error, the request log records it,
    and the server's peak memory grows by far less than the body: it kept only the limit's
    worth (security review, finding 8). Plain ``daphne`` grows by more than the body."""
    database = tmp_path / "db.sqlite3"
    env = {"DJANGO_MCP_SQLITE": str(database), "DJANGO_MCP_DB": "sqlite"}
    migrate(LOGGED_SETTINGS, env)
    with live_server(LOGGED_SETTINGS, tmp_path, kind="daphne", env=env) as server:
        before = peak_rss_kb(server.process.pid)
        assert_too_large(*chunked_post(server.port, [b" " * MEGABYTE] * HUGE_BODY_MB))
        grown_kb = peak_rss_kb(server.process.pid) - before
        assert grown_kb * 1024 < HUGE_BODY_MB * MEGABYTE / 4, f"peak RSS grew {grown_kb} kB"
        assert 413 in logged_statuses(database)
        assert server.is_running()


@pytest.mark.live
@pytest.mark.parametrize("application", [APPLICATION, NATIVE_APPLICATION])
def test_uvicorn_answers_413_before_the_body_has_ended(tmp_path: Path, application: str):
    """Under a server with flow control, ``BodyLimit`` (and the native path) answers as
    soon as the limit is passed: the client has not even finished the body. Without the
    guard Django waits for the end of the body and this never gets an answer."""
    with live_server(LIVE_SETTINGS, tmp_path, kind="uvicorn", application=application) as server:
        status, body = chunked_post(server.port, [b" " * 8192] * 10, finish=False)
        assert_too_large(status, body)


@pytest.mark.live
@pytest.mark.parametrize("application", [WSGI_APPLICATION, NATIVE_WSGI_APPLICATION])
def test_gunicorn_serves_a_valid_chunked_request_and_refuses_a_large_one(
    tmp_path: Path, application: str
):
    """WSGI: gunicorn passes a chunked body with no CONTENT_LENGTH; it is read (up to the
    limit) from ``wsgi.input`` instead of being taken for an empty body, on Django's path
    and on the native one."""
    raw = json.dumps(DISCOVER).encode()
    with live_server(LIVE_SETTINGS, tmp_path, kind="gunicorn", application=application) as server:
        status, body = chunked_post(server.port, [raw[:10], raw[10:50], raw[50:]])
        assert status == 200, body[:300]
        assert "supportedVersions" in json.loads(body)["result"]
        assert_too_large(*chunked_post(server.port, [b" " * 8192] * 128))


def malformed_chunked_post(port: int, framing: bytes) -> tuple[int, bytes]:
    """POST a chunked body whose framing after the headers is ``framing`` (raw bytes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT) as sock:
        sock.sendall(chunked_head(port, "Connection: close") + framing)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, response.read()


RAW_DISCOVER = json.dumps(DISCOVER).encode()
MALFORMED_CHUNKS = {
    "a chunk size that is not hex": b"zz\r\n" + RAW_DISCOVER + b"\r\n0\r\n\r\n",
    "more data than the chunk size": b"5\r\n" + RAW_DISCOVER + b"\r\n0\r\n\r\n",
    "a negative chunk size": b"-5\r\n" + RAW_DISCOVER + b"\r\n0\r\n\r\n",
}


@pytest.mark.live
@pytest.mark.parametrize("application", [WSGI_APPLICATION, NATIVE_WSGI_APPLICATION])
def test_gunicorn_answers_a_malformed_chunked_body_with_a_parse_error(
    tmp_path: Path, application: str
):
    """streamable-http.mdx: the body is one JSON-RPC message; a body that cannot be read is
    none, so 400 with -32700 (docs/errors.md, step 4), as for a body cut short. gunicorn
    raises its own ``ParseException`` (not ``OSError``) from ``wsgi.input`` for bad chunk
    framing, which was answered with Django's HTML 500 (or -32603 on the native path)."""
    with live_server(LIVE_SETTINGS, tmp_path, kind="gunicorn", application=application) as server:
        for what, framing in MALFORMED_CHUNKS.items():
            status, body = malformed_chunked_post(server.port, framing)
            assert status == 400, (what, body[:300])
            assert json.loads(body)["error"]["code"] == PARSE_ERROR, what


class ServerFramingError(Exception):
    """What a WSGI server's input stream may raise that is not an ``OSError``."""


class Malformed:
    """A terminated ``wsgi.input`` whose server cannot decode the body's framing."""

    def read(self, size: int = -1) -> bytes:
        raise ServerFramingError("Invalid chunk size: 'zz'")


def test_a_framing_error_of_the_server_makes_the_body_unreadable(caplog):
    """Whatever the server's stream raises becomes ``UnreadablePostError`` (an ``OSError``),
    which the middleware answers with -32700 and records, like a reset connection."""
    from django.http import UnreadablePostError
    from django.test import RequestFactory

    from django_mcp.http.body import read_at_most

    request = RequestFactory().post("/mcp", b"", content_type="application/json")
    request.META.pop("CONTENT_LENGTH", None)
    request.META.update({"wsgi.input": Malformed(), "wsgi.input_terminated": True})
    with pytest.raises(UnreadablePostError) as raised:
        read_at_most(request, 100)
    assert isinstance(raised.value.__cause__, ServerFramingError)
    (logged,) = [r for r in caplog.records if r.name == "django_mcp"]
    assert logged.levelname == "WARNING"
    assert logged.exc_info is not None  # a wrapper's bug is not hidden behind -32700


class Trickle:
    """A terminated ``wsgi.input`` that returns at most 3 bytes per read, as sockets may."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, size: int = -1) -> bytes:
        size = 3 if size < 0 else min(size, 3)
        chunk, self.data = self.data[:size], self.data[size:]
        return chunk


@pytest.mark.parametrize(("data", "expected"), [(b"x" * 10, b"x" * 10), (b"y" * 100, b"y" * 21)])
def test_a_terminated_wsgi_input_without_length_is_read_up_to_the_limit(data, expected):
    """PEP 3333 servers that decode chunked bodies set ``wsgi.input_terminated``; the body
    is read from ``wsgi.input`` across short reads, never past ``size`` bytes."""
    from django.test import RequestFactory

    from django_mcp.http.body import read_at_most

    request = RequestFactory().post("/mcp", b"", content_type="application/json")
    request.META.pop("CONTENT_LENGTH", None)
    request.META.update({"wsgi.input": Trickle(data), "wsgi.input_terminated": True})
    assert read_at_most(request, 21) == expected
