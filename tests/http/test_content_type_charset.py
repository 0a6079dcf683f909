"""A ``Content-Type`` whose charset parameter Django cannot read, on Django's own paths.

Django builds its request (``WSGIRequest``, ``ASGIRequest``) in the handler, before any
middleware runs and outside the code that turns exceptions into responses
(``WSGIHandler.__call__``; ``ASGIHandler.create_request`` catches only
``UnicodeDecodeError``). Parsing ``Content-Type`` there raises ``ValueError`` for an
RFC 2231 charset (``charset*=``) that names an unknown codec (``parse_header_parameters``)
or decodes to NUL (``codecs.lookup``): the exception escapes Django to the server, which
answers its own 500, and no middleware of django-mcp can see the request. A plain
``charset=bogus`` is not that case: Django ignores a charset it cannot look up, and the
request is answered as usual. The native paths (``NativeMCPWSGI``, ``NativeMCP``) build
the request themselves and answer a 400 with -32600 (docs/deployment.md). These tests pin
that finding, so that a Django release that changes it shows up here.
basic/transports/streamable-http.mdx, "Sending Messages to the Server": input the server
cannot accept gets an HTTP error status and a JSON-RPC error without an id.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import threading
import traceback
from collections.abc import Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import httpx
import pytest
from django.core.asgi import get_asgi_application
from django.core.exceptions import BadRequest
from django.core.wsgi import get_wsgi_application
from django.test import Client

from django_mcp.http.native import NativeMCP
from django_mcp.http.native_wsgi import NativeMCPWSGI
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.helpers import mcp_asgi_scope, mcp_body, mcp_headers

#: What Django raises for each: the RFC 2231 charset is unknown, or decodes to NUL.
#: Django 5.2 raises ValueError; 6.1 wraps the unknown-codec case in BadRequest("Invalid
#: Content-Type header.") (still raised in the request class, before any middleware).
RAISED = (
    "Invalid encoding 'bogus' for RFC 2231 param|embedded null character"
    "|Invalid Content-Type header"
)
UNREADABLE_ERRORS = (ValueError, BadRequest)
UNREADABLE = ["application/json; charset*=bogus''x", "application/json; charset*=utf-8''%00"]
IGNORED = ["application/json; charset=bogus", "application/json; charset=zlib"]

MESSAGE = mcp_body("tools/list", {})
BODY = json.dumps(MESSAGE).encode()


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class QuietServer(WSGIServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


@pytest.fixture
def wsgiref_server() -> Iterator[int]:
    """Django's WSGI application (as ``testproject/wsgi.py`` serves it) behind the standard
    library's WSGI server on a loopback port; its port."""
    server = make_server(
        "127.0.0.1",
        0,
        get_wsgi_application(),
        server_class=QuietServer,
        handler_class=QuietHandler,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def raw_post(port: int, content_type: str) -> tuple[int, bytes]:
    """POST the MCP request over a socket, ``content_type`` as given; status and body."""
    head = [
        "POST /mcp HTTP/1.1",
        "Host: localhost",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(BODY)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in mcp_headers(MESSAGE).items()),
    ]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall("\r\n".join(head).encode("latin-1") + b"\r\n\r\n" + BODY)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status_line, _, rest = data.partition(b"\r\n")
    return int(status_line.split()[1]), rest.partition(b"\r\n\r\n")[2]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("content_type", UNREADABLE)
def test_django_wsgi_path_escapes_to_the_servers_own_500(wsgiref_server: int, content_type: str):
    status, body = raw_post(wsgiref_server, content_type)
    assert status == 500
    assert body.startswith(b"A server error occurred.")  # wsgiref's page, not Django's
    assert recorder.flush() == 0  # no middleware saw the request


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("content_type", IGNORED)
def test_django_wsgi_path_ignores_a_plain_charset_it_cannot_use(
    wsgiref_server: int, content_type: str
):
    status, body = raw_post(wsgiref_server, content_type)
    assert status == 200
    assert "tools" in json.loads(body)["result"]


@pytest.mark.django_db
@pytest.mark.parametrize("content_type", UNREADABLE)
def test_django_raises_in_its_request_class_before_any_middleware(
    client: Client, content_type: str
):
    # generic(), not post(): post() encodes the body in the charset named (the test
    # client's own LookupError for charset=bogus was a false lead).
    with pytest.raises(UNREADABLE_ERRORS, match=RAISED) as caught:
        client.generic(
            "POST", "/mcp", BODY, content_type=content_type, headers=mcp_headers(MESSAGE)
        )
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert any(f.name == "__init__" and f.filename.endswith("handlers/wsgi.py") for f in frames)
    assert not any("django_mcp" in f.filename for f in frames)


@pytest.mark.django_db
@pytest.mark.parametrize("content_type", UNREADABLE)
# Django's ASGIHandler has read the body into a SpooledTemporaryFile and leaves it unclosed
# when create_request raises: collected here, it warns (ResourceWarning) in this test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_django_asgi_path_lets_it_escape_too(content_type: str):
    with pytest.raises(UNREADABLE_ERRORS, match=RAISED):
        asyncio.run(asgi_call(get_asgi_application(), content_type))
    gc.collect()


@pytest.mark.django_db
@pytest.mark.usefixtures("keep_the_test_database_connection")
@pytest.mark.parametrize("content_type", UNREADABLE)
def test_the_native_paths_answer_a_recorded_400(content_type: str):
    transport = httpx.WSGITransport(app=NativeMCPWSGI(get_wsgi_application()))
    with httpx.Client(transport=transport, base_url="http://testserver") as native:
        headers = {**mcp_headers(MESSAGE), "Content-Type": content_type}
        answered = native.post("/mcp", content=BODY, headers=headers)
    assert answered.status_code == 400
    assert (answered.json()["error"]["code"], "id" in answered.json()) == (-32600, False)
    start, body = asyncio.run(asgi_call(NativeMCP(get_asgi_application()), content_type))
    assert start["status"] == 400
    assert json.loads(body)["error"]["code"] == -32600
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [
        (400, -32600),
        (400, -32600),
    ]


async def asgi_call(app: Any, content_type: str) -> tuple[dict[str, Any], bytes]:
    """One ASGI exchange of the MCP request; the response start and the body."""
    sent: list[dict[str, Any]] = []
    received = [{"type": "http.request", "body": BODY, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if received:
            return received.pop(0)
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = mcp_asgi_scope(MESSAGE, len(BODY), content_type=content_type)
    await app(scope, receive, send)
    start, *chunks = sent
    return start, b"".join(chunk.get("body", b"") for chunk in chunks)
