"""What a stdio line holds around its message: only JSON's own whitespace is taken off,
so a line is admitted (or refused) exactly as the same bytes POSTed over HTTP are
(docs/adr/0002-validate-once.md)."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import AnonymousUser

from django_mcp.server.dispatch import MCPServer
from django_mcp.sites import site
from django_mcp.stdio.transport import StdioServer
from tests.helpers import mcp_body, mcp_headers, post_raw

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("padding", [b"\x0b", b"\x0c", b"\x1c", b"\x85"])
def test_a_message_padded_with_what_json_calls_no_whitespace_is_refused_as_over_http(
    client, padding
):
    """basic/transports/stdio.mdx: each line is one JSON-RPC message, and the client MUST
    NOT write anything that is not a valid MCP message. RFC 8259 allows only space, tab,
    line feed and carriage return around a JSON text; a vertical tab or a form feed is no
    JSON whitespace, and HTTP refuses such a body with -32700. stdio took them off
    (``bytes.strip``) and answered the request, so the same bytes were a request on one
    transport and a parse error on the other."""
    body = mcp_body("server/discover", {}, id=1)
    raw = padding + json.dumps(body).encode() + padding

    over_http = post_raw(client, raw, mcp_headers(body)).json()
    output = io.BytesIO()
    StdioServer(MCPServer(site), output, user=AnonymousUser()).serve([raw + b"\n"])
    [over_stdio] = [json.loads(line) for line in output.getvalue().splitlines()]

    assert over_http["error"]["code"] == -32700
    assert over_stdio == over_http


def test_json_whitespace_around_a_message_and_blank_lines_are_taken_off() -> None:
    """Space, tab and ``\\r`` (a ``\\r\\n`` line ending) around a message are JSON
    whitespace, which every JSON text may have; a line of nothing else is no message."""
    body = mcp_body("server/discover", {}, id=1)
    output = io.BytesIO()
    stdio = StdioServer(MCPServer(site), output, user=AnonymousUser())
    stdio.serve([b" \t\r\n", b"\t " + json.dumps(body).encode() + b" \r\n"])
    [answer] = [json.loads(line) for line in output.getvalue().splitlines()]

    assert answer["id"] == 1
    assert "result" in answer
