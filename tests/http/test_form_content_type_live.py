"""A JSON body sent under a form's ``Content-Type`` is served and recorded on every server.

Servers are lenient about a request's ``Content-Type``: MCP bodies are JSON, and
basic/transports/streamable-http.mdx defines no status for another type, so the body is
parsed as JSON whatever the header says (docs/errors.md). Daphne's Twisted used to parse such
a body as a form first and answer a false multipart with a bare 400 of its own, before the
application ran: refused only under Daphne, and missing from the request log. The request
class behind this is tested in ``test_daphne_body.py``.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.helpers import mcp_body, mcp_headers
from tests.live import live_server, migrate

LOGGED_SETTINGS = "tests.http.logged_limits_settings"  # the testproject, request log on
READ_TIMEOUT = 30.0  # a bound on waiting, not a measurement
DISCOVER = mcp_body("server/discover")
FORM_TYPES = ["multipart/form-data; boundary=xyz", "application/x-www-form-urlencoded"]


def post(port: int, content_type: str, request_id: int) -> tuple[int, dict[str, object]]:
    """POST ``server/discover`` to /mcp under ``content_type``; the status and the JSON."""
    body = json.dumps({**DISCOVER, "id": request_id}).encode()
    headers = {**mcp_headers(DISCOVER), "Content-Type": content_type}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=READ_TIMEOUT)
    with closing(connection):
        connection.request("POST", "/mcp", body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())


def logged_rows(database: Path, expected: int) -> list[tuple[str, int]]:
    """The live server's request log as ``(request_id, http_status)`` rows, the start-up
    probe's left out, once it holds ``expected`` of them (it writes from a background
    thread; bounded polling)."""
    deadline = time.monotonic() + READ_TIMEOUT
    rows: list[tuple[str, int]] = []
    while len(rows) < expected and time.monotonic() < deadline:
        with closing(sqlite3.connect(database, timeout=READ_TIMEOUT)) as connection:
            query = (
                "SELECT request_id, http_status FROM django_mcp_requestlog "
                "WHERE request_id != '0' ORDER BY id"
            )
            rows = connection.execute(query).fetchall()
        time.sleep(0.1)
    return rows


@pytest.mark.live
@pytest.mark.parametrize("kind", ["daphne", "uvicorn", "gunicorn"])
def test_a_json_body_sent_as_a_form_is_served_and_recorded(tmp_path: Path, kind: str):
    database = tmp_path / "db.sqlite3"
    env = {"DJANGO_MCP_SQLITE": str(database), "DJANGO_MCP_DB": "sqlite"}
    migrate(LOGGED_SETTINGS, env)
    with live_server(LOGGED_SETTINGS, tmp_path, kind=kind, env=env) as server:
        for request_id, content_type in enumerate(FORM_TYPES, start=1):
            status, answer = post(server.port, content_type, request_id)
            assert status == 200, answer
            assert answer["id"] == request_id
            assert "supportedVersions" in answer["result"], answer  # type: ignore[operator]
        rows = logged_rows(database, len(FORM_TYPES))
    assert [(str(request_id), status) for request_id, status in rows] == [("1", 200), ("2", 200)]
