"""A tool over ``TOOL_TIMEOUT`` on stdio is answered with its timeout error.

The limit works by cancelling the request's Context (:mod:`django_mcp.server.limits`);
stdio took any cancelled Context for the client's ``notifications/cancelled`` and sent no
response, so the client waited for ever for a call the server had finished. Only the
client's own cancellation silences a response (basic/patterns/cancellation.mdx)."""

from __future__ import annotations

import io
import json
import time

import pytest
from django.contrib.auth.models import AnonymousUser

from django_mcp.server.dispatch import MCPServer
from django_mcp.sites import MCPSite
from django_mcp.stdio.transport import StdioServer
from tests.helpers import override_mcp

pytestmark = pytest.mark.django_db(transaction=True)

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def test_a_tool_past_the_time_limit_is_answered_with_its_timeout(mcp_site: MCPSite) -> None:
    @mcp_site.tool
    def slow() -> str:
        time.sleep(0.5)
        return "late"

    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "slow", "arguments": {}, "_meta": META},
    }
    output = io.BytesIO()
    with override_mcp(TOOL_TIMEOUT=0.1):
        StdioServer(MCPServer(mcp_site), output, user=AnonymousUser()).serve(
            [json.dumps(request).encode()]
        )

    [line] = output.getvalue().splitlines()
    reply = json.loads(line)
    assert reply["id"] == 7
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"] == "Tool slow timed out after 0.1 seconds."
