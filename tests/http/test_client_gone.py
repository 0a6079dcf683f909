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
import contextlib
import gc
import json
import socket
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.asgi import get_asgi_application

from django_mcp.http.asgi import BodyLimit
from django_mcp.http.middleware import UNREADABLE_BODY
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
    """Sends ``sent`` bytes of its body (by default half), then disconnects; or, when it
    ``stays``, sends the whole body and waits for the answer; or, with ``leaves_after``
    seconds, sends the whole body and disconnects that long after."""

    def __init__(
        self,
        body: bytes,
        *,
        stays: bool = False,
        sent: int | None = None,
        leaves_after: float | None = None,
    ) -> None:
        self.leaves_after = leaves_after
        if stays or leaves_after is not None:
            self.messages = [{"type": "http.request", "body": body, "more_body": False}]
        else:
            part = body[: len(body) // 2 if sent is None else sent]
            self.messages = [
                {"type": "http.request", "body": part, "more_body": True},
                {"type": "http.disconnect"},
            ]
        self.stays = stays
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if len(self.messages) > 1 or (
            self.messages and self.messages[0]["type"] != "http.disconnect"
        ):
            return self.messages.pop(0)
        if self.stays:
            await asyncio.Event().wait()  # connected until the answer is read
        if self.leaves_after is not None:
            await asyncio.sleep(self.leaves_after)
            return {"type": "http.disconnect"}
        return self.messages[0]  # a server repeats the disconnect to every later receive

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)


def scope(body: bytes, message: dict[str, Any], method: str = "POST") -> dict[str, Any]:
    headers = {"host": "testserver", "content-type": "application/json"}
    headers |= {name.lower(): value for name, value in mcp_headers(message).items()}
    headers["content-length"] = str(len(body))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
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


class ReadsTheBody:
    """A project middleware before ``MCPMiddleware`` that reads the body (an audit log)."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        request.body  # noqa: B018
        return self.get_response(request)


class CopiesTheScope:
    """An ASGI middleware between ``BodyLimit`` and Django that passes a copy of the scope."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.application(dict(scope), receive, send)


def test_a_whole_message_cut_off_by_a_disconnect_is_refused_however_it_is_read(settings):
    """The bytes that arrived before the disconnect may be a whole JSON-RPC message (the
    declared body was longer). It is still refused as unread: when a middleware before
    ``MCPMiddleware`` already read the body, and when an ASGI middleware between
    ``BodyLimit`` and Django copied the scope (a review's finding: both were served)."""
    message = mcp_body("tools/list", {})
    whole = json.dumps(message).encode()
    body = whole + b" " * 10  # the declared length counts padding that never comes
    settings.MIDDLEWARE = ["tests.http.test_client_gone.ReadsTheBody", *settings.MIDDLEWARE]
    for app in (
        BodyLimit(get_asgi_application()),
        BodyLimit(CopiesTheScope(get_asgi_application())),
    ):
        client = Client(body, sent=len(whole))
        asyncio.run(app(scope(body, message), client.receive, client.send))
        assert client.sent[0]["status"] == 400

    recorder.flush()
    rows = list(RequestLog.objects.values_list("http_status", "error_code", "error_message"))
    assert rows == [(400, -32700, UNREADABLE_BODY)] * 2


def test_a_client_that_leaves_while_its_tool_runs_is_recorded(mcp_site):
    """A plain-JSON request has no stream to close, so its sync tool runs to its end
    (docs/guides/streaming.md); Django's handler stopped waiting for it on the
    disconnect, and the exchange was never recorded (a review's finding). ``BodyLimit``
    now holds the disconnect back until the answer starts: the row tells what was done."""
    finished: list[str] = []

    @mcp_site.tool
    def slow_write() -> str:
        time.sleep(0.5)
        finished.append("written")
        return "written"

    message = mcp_body("tools/call", {"name": "slow_write", "arguments": {}})
    body = json.dumps(message).encode()
    client = Client(body, leaves_after=0.05)

    asyncio.run(
        BodyLimit(get_asgi_application())(scope(body, message), client.receive, client.send)
    )

    assert finished == ["written"]
    recorder.flush()
    rows = list(RequestLog.objects.values_list("http_status", "error_code", "target"))
    assert rows == [(200, None, "slow_write")]


def test_a_non_post_cut_off_on_the_native_path_is_recorded() -> None:
    """The native path hands a ``GET`` to Django with the same guard as ``BodyLimit``
    (the review found it dropped unrecorded there): 405, recorded."""
    message = mcp_body("tools/list", {})
    body = json.dumps(message).encode()
    client = Client(body)

    asyncio.run(
        NativeMCP(get_asgi_application())(scope(body, message, "GET"), client.receive, client.send)
    )

    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", flat=True)) == [405]


def test_the_gone_flag_ends_with_its_request(client) -> None:
    """A caller that drives the ASGI application through ``async_to_sync`` gets the
    request's context changes copied back; the flag set for a client that left stayed set
    in that thread, and every later request there, WSGI ones included, was refused as
    unread (a review's finding). It is now scoped to its request."""
    message = mcp_body("tools/list", {})
    body = json.dumps(message).encode()
    app = async_to_sync(BodyLimit(get_asgi_application()))
    leaving, staying = Client(body), Client(body, stays=True)

    app(scope(body, message), leaving.receive, leaving.send)
    app(scope(body, message), staying.receive, staying.send)
    over_wsgi = client.post(
        "/mcp", json.dumps(message), content_type="application/json", headers=mcp_headers(message)
    )

    assert leaving.sent[0]["status"] == 400
    assert staying.sent[0]["status"] == 200
    assert over_wsgi.status_code == 200


# Django's handler, cancelled, leaves its spooled body file to the collector: its own.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_request_the_server_stops_after_its_client_left_ends_quietly(mcp_site) -> None:
    """Daphne cancels an application some seconds after its client left. The disconnect
    ``BodyLimit`` held back for Django's listener is then let go as a cancellation: as a
    disconnect it made the listener raise ``RequestAborted`` once the orphaned view
    answered, which asyncio logged as an exception never retrieved (a review's finding)."""

    @mcp_site.tool
    def slow_write() -> str:
        time.sleep(0.3)
        return "written"

    message = mcp_body("tools/call", {"name": "slow_write", "arguments": {}})
    body = json.dumps(message).encode()
    client = Client(body, leaves_after=0.05)
    reported: list[dict[str, Any]] = []

    async def serve_then_stop() -> None:
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: reported.append(context)
        )
        app = BodyLimit(get_asgi_application())
        served = asyncio.ensure_future(app(scope(body, message), client.receive, client.send))
        await asyncio.sleep(0.15)  # the client has left; the tool runs on in its thread
        served.cancel()  # what Daphne does after application_close_timeout
        with contextlib.suppress(asyncio.CancelledError):
            await served
        await asyncio.sleep(0.5)  # the tool answers, to nobody
        gc.collect()  # an unretrieved task exception is reported when the task is freed

    asyncio.run(serve_then_stop())

    assert [context.get("exception") for context in reported] == []


LOGGED_SETTINGS = "tests.http.logged_limits_settings"  # the request log on, a SQLite file
WAIT = 30.0  # a bound on waiting for the server's writer thread, not a measurement


def http_head(message: dict[str, Any], length: int) -> bytes:
    """The request line and headers of a ``POST`` of ``message`` declaring ``length``."""
    head = [
        "POST /mcp HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {length}",
        *(f"{name}: {value}" for name, value in mcp_headers(message).items()),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode()


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


def rows_for(database: Path, target: str) -> list[tuple[int, int | None]]:
    """The live server's rows for calls of ``target``, once it holds one (polled, with a
    bound, as :func:`refusals`)."""
    deadline = time.monotonic() + WAIT
    rows: list[tuple[int, int | None]] = []
    while not rows and time.monotonic() < deadline:
        time.sleep(0.1)
        with closing(sqlite3.connect(database, timeout=WAIT)) as connection:
            query = "SELECT http_status, error_code FROM django_mcp_requestlog WHERE target = ?"
            rows = connection.execute(query, (target,)).fetchall()
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
    with live_server(
        LOGGED_SETTINGS, tmp_path, kind=kind, application=application, env=env
    ) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(http_head(message, len(body)) + body[: len(body) // 2])
        assert refusals(database) == [(400, -32700)]
        assert server.is_running()


@pytest.mark.live
@pytest.mark.parametrize(
    ("kind", "application"),
    [("uvicorn", APPLICATION), ("uvicorn", NATIVE_APPLICATION), ("daphne", APPLICATION)],
)
def test_a_real_client_that_hangs_up_while_its_tool_runs_is_recorded(
    tmp_path: Path, kind: str, application: str
) -> None:
    """Through uvicorn and Daphne: a whole ``tools/call`` of a one-second tool, then the
    socket is closed while it runs. The tool's answer is what the row records."""
    database = tmp_path / "db.sqlite3"
    env = {"DJANGO_MCP_SQLITE": str(database), "DJANGO_MCP_DB": "sqlite"}
    migrate(LOGGED_SETTINGS, env)
    message = mcp_body("tools/call", {"name": "slow_compute", "arguments": {"seconds": 1}})
    body = json.dumps(message).encode()
    with live_server(
        LOGGED_SETTINGS, tmp_path, kind=kind, application=application, env=env
    ) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(http_head(message, len(body)) + body)
            time.sleep(0.2)  # the tool is running
        assert rows_for(database, "slow_compute") == [(200, None)]
        assert server.is_running()
