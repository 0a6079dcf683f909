"""A client that disconnects before its body ends is still recorded, on both ASGI paths.

Django's ASGI handler drops such a request before any middleware runs, and the native
path returned as soon as it saw the disconnect: either way the request log never heard of
the request (a gap noted by a hostile probe). Now ``BodyLimit`` and ``NativeMCP`` record
it as a WSGI server's reset connection is recorded (tests/http/test_unreadable_body.py):
HTTP 400 with -32700, since no complete message arrived (basic/index.mdx; the body-less
error of basic/transports/streamable-http.mdx). The native path sends nothing, as nobody
is listening.
"""

from __future__ import annotations

import asyncio
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
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.helpers import mcp_body, mcp_headers
from tests.live import (
    APPLICATION,
    NATIVE_APPLICATION,
    NATIVE_WSGI_APPLICATION,
    WSGI_APPLICATION,
    live_server,
    migrate,
)

pytestmark = pytest.mark.django_db(transaction=True)


class Client:
    """Sends the first half of its body, then disconnects; or, when it ``stays``, sends
    the whole body and waits for the answer."""

    def __init__(self, body: bytes, *, stays: bool = False) -> None:
        if stays:
            self.messages = [{"type": "http.request", "body": body, "more_body": False}]
        else:
            half = body[: len(body) // 2]
            self.messages = [
                {"type": "http.request", "body": half, "more_body": True},
                {"type": "http.disconnect"},
            ]
        self.stays = stays
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if len(self.messages) > 1 or (self.messages and self.stays):
            return self.messages.pop(0)
        if self.stays:
            await asyncio.Event().wait()  # connected until the answer is read
        return self.messages[0]  # a server repeats the disconnect to every later receive

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


def scope(body: bytes, message: dict[str, Any]) -> dict[str, Any]:
    headers = {"host": "testserver", "content-type": "application/json"}
    headers |= {name.lower(): value for name, value in mcp_headers(message).items()}
    headers["content-length"] = str(len(body))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }


@pytest.mark.parametrize("wrapper", [BodyLimit, NativeMCP], ids=["BodyLimit", "NativeMCP"])
def test_a_client_gone_mid_body_is_a_recorded_400_parse_error(wrapper: Any) -> None:
    message = mcp_body("tools/list", {})
    body = json.dumps(message).encode()
    client = Client(body)

    asyncio.run(wrapper(get_asgi_application())(scope(body, message), client.receive, client.send))

    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(400, -32700)]
    if wrapper is NativeMCP:
        assert client.sent == []


def test_a_complete_body_is_served_as_before() -> None:
    """The disconnect handling leaves a whole body alone: it is answered and recorded."""
    message = mcp_body("tools/list", {})
    body = json.dumps(message).encode()
    client = Client(body, stays=True)

    asyncio.run(
        BodyLimit(get_asgi_application())(scope(body, message), client.receive, client.send)
    )

    assert client.sent[0]["status"] == 200
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(200, None)]


LOGGED_SETTINGS = "tests.http.logged_limits_settings"  # the request log on, a SQLite file
WAIT = 30.0  # a bound on waiting for the server's writer thread, not a measurement


def refusals(database: Path) -> list[tuple[int, int | None]]:
    """The refusals in the live server's request log (the server's start was answered
    and recorded too), once it holds one: it writes from a background thread, so this
    polls, with a bound, as for a server's start."""
    deadline = time.monotonic() + WAIT
    rows: list[tuple[int, int | None]] = []
    while not rows and time.monotonic() < deadline:
        time.sleep(0.1)
        with closing(sqlite3.connect(database, timeout=WAIT)) as connection:
            query = (
                "SELECT http_status, error_code FROM django_mcp_requestlog WHERE http_status >= 400"
            )
            rows = connection.execute(query).fetchall()
    return rows


@pytest.mark.live
@pytest.mark.parametrize(
    ("kind", "application"),
    [
        ("uvicorn", APPLICATION),
        ("uvicorn", NATIVE_APPLICATION),
        ("gunicorn", WSGI_APPLICATION),
        ("gunicorn", NATIVE_WSGI_APPLICATION),
    ],
)
def test_a_real_client_that_hangs_up_mid_body_is_recorded(
    tmp_path: Path, kind: str, application: str
) -> None:
    """Through a real server: half of a declared body, then the socket is closed. Under
    gunicorn this was recorded already (the read comes up short or fails); the WSGI cases
    keep it so."""
    database = tmp_path / "db.sqlite3"
    env = {"DJANGO_MCP_SQLITE": str(database), "DJANGO_MCP_DB": "sqlite"}
    migrate(LOGGED_SETTINGS, env)
    message = mcp_body("tools/list", {})
    body = json.dumps(message).encode()
    head = [
        "POST /mcp HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(body)}",
        *(f"{name}: {value}" for name, value in mcp_headers(message).items()),
    ]
    with live_server(
        LOGGED_SETTINGS, tmp_path, kind=kind, application=application, env=env
    ) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body[: len(body) // 2])
        assert refusals(database) == [(400, -32700)]
        assert server.is_running()
