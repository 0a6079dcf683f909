"""A request that ends without a response from Django is still recorded.

Django turns every ``Exception`` into a response, which ``MCPMiddleware`` records; a
``BaseException`` goes past it. Two happen in production: gunicorn's ``--timeout`` raises
``SystemExit`` in the sync worker it stops (a slow tool, a client that never sends the end
of its body), and Django's ASGI handler cancels a request whose client went away. Both
lost the request's row (hostile review); the request happened, so the log keeps it, with
a note of why it has no answer: 500 when the server stopped it, 499 when the client left.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgiref.sync import markcoroutinefunction
from django.core.asgi import get_asgi_application

from django_mcp.http.middleware import CLIENT_LEFT, WORKER_STOPPED
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.helpers import mcp_body, mcp_environ, mcp_headers, mcp_post
from tests.http.test_client_gone import Client, scope
from tests.live import live_server, migrate

LOGGED = ("http_status", "outcome", "target", "error_message")


@pytest.mark.django_db
@pytest.mark.parametrize("stop", [SystemExit, KeyboardInterrupt])
def test_a_worker_stopped_mid_call_still_leaves_its_row(client, mcp_site, stop):
    """What gunicorn's timeout does to a sync worker: the tool is interrupted by a
    ``SystemExit`` that nothing may swallow. The row is written, then it goes on."""

    @mcp_site.tool
    def stuck() -> str:
        raise stop(1)

    with pytest.raises(stop):
        mcp_post(client, "tools/call", {"name": "stuck", "arguments": {}})

    recorder.flush()
    status, note = WORKER_STOPPED
    assert list(RequestLog.objects.values_list(*LOGGED)) == [
        (status, "protocol_error", "stuck", note)
    ]


class SlowAfterTheView:
    """A project's async middleware inside ``MCPMiddleware`` that is still at work on the
    response (an audit call, say) when the client leaves."""

    sync_capable = False
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        markcoroutinefunction(self)

    async def __call__(self, request: Any) -> Any:
        response = await self.get_response(request)
        await asyncio.sleep(5)
        return response


@pytest.mark.django_db(transaction=True)
def test_a_request_cancelled_under_asgi_is_recorded_as_the_client_gone(mcp_site, settings):
    """Django's ASGI handler cancels a request whose client went away (here without
    ``BodyLimit``, which holds a disconnect back until the answer starts): the
    cancellation passes through ``MCPMiddleware``, which records the call it ran."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, f"{__name__}.SlowAfterTheView"]

    @mcp_site.tool
    def quick() -> str:
        return "done"

    message = mcp_body("tools/call", {"name": "quick", "arguments": {}})
    body = json.dumps(message).encode()
    visitor = Client(body, leaves_after=0.05)

    asyncio.run(get_asgi_application()(scope(body, message), visitor.receive, visitor.send))

    assert visitor.sent == []
    recorder.flush()
    status, note = CLIENT_LEFT
    assert list(RequestLog.objects.values_list(*LOGGED)) == [(status, "ok", "quick", note)]


LOGGED_SETTINGS = "tests.http.logged_limits_settings"
WAIT_SECONDS = 60.0  # a bound on waiting, not a measurement


def rows_for(database: Path, target: str) -> list[tuple[Any, ...]]:
    """The live server's rows for ``target``, once there are any (bounded polling: the
    worker writes them as it exits)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        with closing(sqlite3.connect(database, timeout=WAIT_SECONDS)) as connection:
            rows = connection.execute(
                "SELECT http_status, error_message FROM django_mcp_requestlog WHERE target = ?",
                (target,),
            ).fetchall()
        if rows:
            return rows
        time.sleep(0.2)
    return []


@pytest.mark.live
def test_gunicorn_timeout_leaves_the_row_of_the_request_it_stopped(tmp_path: Path):
    """A real sync worker with a 2-second ``--timeout`` and a call of the demo's
    ``slow_compute`` for 60 seconds: gunicorn stops the worker, whose exit writes the row,
    and a new worker serves the next request."""
    database = tmp_path / "db.sqlite3"
    env = {
        "DJANGO_MCP_SQLITE": str(database),
        "DJANGO_MCP_DB": "sqlite",
        "GUNICORN_CMD_ARGS": "--timeout 2",
    }
    migrate(LOGGED_SETTINGS, env)
    message = mcp_body("tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}})
    with live_server(LOGGED_SETTINGS, tmp_path, kind="gunicorn-sync", env=env) as server:
        try:
            stopped = httpx.post(
                server.url("/mcp"),
                content=json.dumps(message),
                headers={**mcp_headers(message), "Content-Type": "application/json"},
                timeout=WAIT_SECONDS,
            )
        except httpx.HTTPError:
            pass  # the connection closed with the worker: no answer at all
        else:
            assert stopped.status_code >= 500, stopped.text[:300]  # or the server's error page
        assert rows_for(database, "slow_compute") == [WORKER_STOPPED]
        discover = mcp_body("server/discover")
        answered = httpx.post(
            server.url("/mcp"),
            content=json.dumps(discover),
            headers={**mcp_headers(discover), "Content-Type": "application/json"},
            timeout=WAIT_SECONDS,
        )
        assert answered.status_code == 200


@pytest.mark.django_db(transaction=True)
def test_the_native_wsgi_path_records_a_stopped_worker_too(mcp_site):
    """``NativeMCPWSGI`` runs the same steps without Django's handler: the same row.
    (Outside a test transaction: the path sends ``request_started``, whose
    ``close_old_connections`` would close the connection a test transaction holds.)"""
    import io

    from django.core.wsgi import get_wsgi_application

    from django_mcp.http.native_wsgi import NativeMCPWSGI

    @mcp_site.tool
    def stuck() -> str:
        raise SystemExit(1)

    message = mcp_body("tools/call", {"name": "stuck", "arguments": {}})
    body = json.dumps(message).encode()
    environ = mcp_environ(message, io.BytesIO(body), len(body))
    with pytest.raises(SystemExit):
        NativeMCPWSGI(get_wsgi_application())(environ, lambda status, headers: None)

    recorder.flush()
    status, note = WORKER_STOPPED
    assert list(RequestLog.objects.values_list(*LOGGED)) == [
        (status, "protocol_error", "stuck", note)
    ]


@pytest.mark.django_db
def test_a_failure_to_record_never_replaces_the_exception_that_stops_the_worker(
    client, mcp_site, monkeypatch
):
    """The worker must still get its ``SystemExit`` (or it does not stop)."""
    from django_mcp.http import exchange

    @mcp_site.tool
    def stuck() -> str:
        raise SystemExit(1)

    def broken(self: Any, response: Any) -> Any:
        raise RuntimeError("the record could not be built")

    monkeypatch.setattr(exchange.Exchange, "record", broken)
    with pytest.raises(SystemExit):
        mcp_post(client, "tools/call", {"name": "stuck", "arguments": {}})


def test_the_native_asgi_path_calls_a_cancellation_a_stop_not_a_client_gone():
    """``NativeMCP`` listens for no disconnect while it answers, so only a server shutting
    down cancels a request there: its rows say the server stopped it (500), not that the
    client left (499). (A cancellation reaches that code only while nothing runs in a
    thread, which asgiref lets finish; the wiring is what is checked here.)"""
    from django_mcp.http.native import NativeMCP

    native = NativeMCP(get_asgi_application())
    assert native.record_interrupted.keywords == {"when_cancelled": WORKER_STOPPED}
