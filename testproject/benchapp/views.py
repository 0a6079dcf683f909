"""Bare Django JSON views: the baseline each MCP scenario is divided by.

They read the JSON-RPC body and answer the same bytes a ``tools/call`` of ``add(1, 2)``
answers, with no MCP machinery at all, so the ratio "MCP / bare" is django-mcp's own cost on
that server. One plain ``def`` view (the execution model of ``MCPView``) and one ``async def``
view (what an ASGI server runs without a thread hop).
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

SERVER_INFO = {"name": "django-mcp-demo", "version": "0.1.0"}


def _add_result(request: HttpRequest) -> dict[str, Any]:
    payload = json.loads(request.body)
    return {
        "jsonrpc": "2.0",
        "id": payload.get("id"),
        "result": {
            "content": [{"type": "text", "text": "3"}],
            "structuredContent": 3,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        },
    }


def _json(payload: dict[str, Any]) -> HttpResponse:
    body = json.dumps(payload, separators=(",", ":"))
    return HttpResponse(body, content_type="application/json")


@csrf_exempt
def bare(request: HttpRequest) -> HttpResponse:
    """The WSGI-style baseline (and the execution model of ``MCPView``, a sync view)."""
    return _json(_add_result(request))


@csrf_exempt
async def bare_async(request: HttpRequest) -> HttpResponse:
    """The ASGI-native baseline: no thread hop under an ASGI server."""
    return _json(_add_result(request))
