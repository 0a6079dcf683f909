"""The official ``mcp`` SDK's server, stateless with JSON responses, serving ``add``.

``stateless_http=True`` keeps no session between requests and ``json_response=True``
answers each POST with one JSON body instead of an SSE stream: the closest match to what
django-mcp serves for ``tools/call``. Run under uvicorn: ``uvicorn bench.peers.mcp_sdk:app``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-sdk")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


app = server.streamable_http_app(json_response=True, stateless_http=True)
