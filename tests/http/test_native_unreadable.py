"""A request Django cannot read, sent to the native ASGI path: answered and recorded.

A query string that is not UTF-8 makes Django's ``ASGIRequest`` raise
``UnicodeDecodeError``; Django's own ASGI handler answers it with a 400, and the native
path escaped with no answer and no record (a hostile probe's finding). Uvicorn and Daphne
refuse such a request line themselves, so it takes a server that passes raw bytes on.
basic/transports/streamable-http.mdx: a request the server cannot accept gets an HTTP
error status, its body a JSON-RPC error without an id.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.core.asgi import get_asgi_application

from django_mcp.http.native import NativeMCP
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.helpers import mcp_asgi_scope, mcp_body

pytestmark = pytest.mark.django_db


def call(app: Any, scope: dict[str, Any], body: bytes) -> list[dict[str, Any]]:
    """One ASGI exchange with a hand-made scope; the messages the app sent."""
    sent: list[dict[str, Any]] = []
    received = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if received:
            return received.pop(0)
        await asyncio.sleep(3600)  # the client stays connected
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


def test_a_query_string_that_is_not_utf8_is_a_recorded_400(validate_exchange: Any) -> None:
    message = mcp_body("tools/list", {})
    body = json.dumps(message).encode()
    scope = mcp_asgi_scope(message, len(body), query_string=b"a=\xff")

    sent = call(NativeMCP(get_asgi_application()), scope, body)

    start, *chunks = sent
    assert start["status"] == 400
    answer = json.loads(b"".join(chunk.get("body", b"") for chunk in chunks))
    assert answer["error"]["code"] == -32600
    assert "id" not in answer
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(400, -32600)]


def test_a_content_type_django_cannot_read_is_a_recorded_400() -> None:
    """A ``charset`` that names no codec at all (``charset*=utf-8''%00`` decodes to NUL,
    which ``codecs.lookup`` refuses with ``ValueError``) makes ``ASGIRequest`` raise: the
    native path answers 400 with -32600 and no id, and records it, instead of escaping
    with a traceback (basic/transports/streamable-http.mdx, "Sending Messages to the
    Server")."""
    message = mcp_body("tools/list", {})
    body = json.dumps(message).encode()
    scope = mcp_asgi_scope(message, len(body), content_type="application/json; charset*=''%00")

    start, *chunks = call(NativeMCP(get_asgi_application()), scope, body)

    assert start["status"] == 400
    answer = json.loads(b"".join(chunk.get("body", b"") for chunk in chunks))
    assert (answer["error"]["code"], "id" in answer) == (-32600, False)
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(400, -32600)]
