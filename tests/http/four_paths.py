"""One MCP request through each of the four ways a project serves MCP: Django's WSGI and
ASGI handlers (``MCPMiddleware``; under ASGI behind ``BodyLimit``, which asks the native
paths' question of the path too) and the native paths ``NativeMCPWSGI`` and ``NativeMCP``.
A test that takes a ``send`` fixture made with :func:`sender` expects the same answer from
all four (tests/http/test_native_routes.py, tests/http/test_native_view_call.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

from django_mcp.http.asgi import BodyLimit
from django_mcp.http.native import NativeMCP
from django_mcp.http.native_wsgi import NativeMCPWSGI

APPS: dict[str, Callable[[], Any]] = {
    "wsgi django": get_wsgi_application,
    "wsgi native": lambda: NativeMCPWSGI(get_wsgi_application()),
    "asgi django": lambda: BodyLimit(get_asgi_application()),
    "asgi native": lambda: NativeMCP(get_asgi_application()),
}

Send = Callable[[str, dict[str, Any]], httpx.Response]


def sender(kind: str) -> Send:
    """A function that POSTs one MCP message (httpx keyword arguments) at a URL to the
    application ``kind`` of :data:`APPS`, in process, in the test's thread."""
    app = APPS[kind]()

    def send_one(url: str, message: dict[str, Any]) -> httpx.Response:
        if not kind.startswith("asgi"):
            transport = httpx.WSGITransport(app=app, remote_addr="127.0.0.1")
            with httpx.Client(transport=transport, base_url="http://testserver") as client:
                return client.post(url, **message)

        async def run() -> httpx.Response:
            transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
                return await c.post(url, **message)

        return asyncio.run(run())

    return send_one


def text_of(response: httpx.Response) -> str:
    """The text a tool answered (the result's one text block)."""
    assert response.status_code == 200, response.text
    content = response.json()["result"]["content"]
    assert [block["type"] for block in content] == ["text"], content
    return str(content[0]["text"])
