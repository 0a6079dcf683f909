"""stdio: recycling the database connection before a line is handled may fail (the
database went away); that request is answered -32603 and the server goes on.

basic/transports/stdio.mdx (2026-07-28): the server reads messages from stdin until it
ends; every request gets its response. ``close_old_connections()`` ran outside the
guarded region of :meth:`StdioServer.receive` (the thread reading stdin: the process
died) and of :meth:`StdioServer.run` (a worker: the request went unanswered).
"""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import OperationalError

from django_mcp.server.dispatch import MCPServer
from django_mcp.stdio import transport
from django_mcp.stdio.transport import StdioServer
from tests.helpers import mcp_body


def fail_once(monkeypatch: pytest.MonkeyPatch, *, on_worker: bool) -> None:
    """``close_old_connections`` raises the first time it is called on the thread that
    reads stdin (``on_worker=False``) or on a worker thread."""
    real = transport.close_old_connections
    failed: list[bool] = []
    main = threading.current_thread()

    def broken(**kwargs: Any) -> None:
        here_is_worker = threading.current_thread() is not main
        if here_is_worker == on_worker and not failed:
            failed.append(True)
            raise OperationalError("server closed the connection unexpectedly")
        real(**kwargs)

    monkeypatch.setattr(transport, "close_old_connections", broken)


def serve(mcp_site: Any) -> dict[Any, Any]:
    @mcp_site.tool
    def echo(text: str) -> str:
        return text

    output = io.BytesIO()
    stdio = StdioServer(MCPServer(mcp_site), output, user=AnonymousUser(), max_workers=1)
    bodies = [
        mcp_body("tools/call", {"name": "echo", "arguments": {"text": "a"}}, id=1),
        mcp_body("tools/call", {"name": "echo", "arguments": {"text": "b"}}, id=2),
    ]
    stdio.serve([json.dumps(body).encode() for body in bodies])
    return {m["id"]: m for m in map(json.loads, output.getvalue().splitlines())}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("on_worker", [False, True], ids=["reading-thread", "worker"])
def test_a_failed_connection_recycle_answers_internal_error_and_the_server_goes_on(
    mcp_site: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    on_worker: bool,
) -> None:
    fail_once(monkeypatch, on_worker=on_worker)
    with caplog.at_level("ERROR", logger="django_mcp"):
        answers = serve(mcp_site)

    assert answers[1]["error"] == {"code": -32603, "message": "Internal error"}
    assert answers[2]["result"]["content"][0]["text"] == "b"
    assert "server closed the connection unexpectedly" in caplog.text
