"""Under Daphne, an MCP request body is bounded while it arrives (``django_mcp.http.daphne``).

Daphne receives a whole body before the application runs, so ``BodyLimit`` cannot bound
its memory (security review, finding 8). These tests drive Daphne's own request and a real
Twisted HTTP channel with a chunked body far over ``MAX_REQUEST_BYTES`` and look at what the
request kept; the live test in ``test_daphne_live.py`` measures the real server's memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from daphne.http_protocol import HTTPFactory
from daphne.management.commands.runserver import Command as RunserverCommand
from daphne.server import Server as DaphneServer
from twisted.internet.error import ConnectionDone
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure

from django_mcp.http.daphne import BoundedHTTPFactory, BoundedRequest, CommandLineInterface, Server
from tests.helpers import override_mcp

if TYPE_CHECKING:
    from collections.abc import Iterator

LIMIT = 4096
CHUNK = b" " * 1024
CHUNKS = 1000  # a 1 MB body


@pytest.fixture
def server() -> Iterator[Server]:
    """A Daphne server as ``run()`` leaves it, without listening: its HTTP factory is the
    one ``run()`` assigns, and it tracks connections."""
    daphne = Server(application=None, endpoints=["tcp:port=0:interface=127.0.0.1"])
    daphne.connections = {}
    daphne.http_factory = HTTPFactory(daphne)  # what Server.run() does
    daphne.http_factory.timeOut = None  # no idle timer on the (not running) reactor
    yield daphne
    assert all("disconnected" in times for times in daphne.connections.values())


def send_unfinished(
    server: Server, target: str, chunks: int, headers: str = "", *, chunked: bool = True
) -> tuple[int, int]:
    """Feed a POST of ``chunks`` pieces of 1 KB to a channel of ``server``, chunked or with a
    ``Content-Length`` one piece longer, never ending the body (so the request is never
    processed); return the body bytes its request holds and those it dropped, then close
    the connection."""
    channel = server.http_factory.buildProtocol(None)
    channel.makeConnection(StringTransport())
    framing = (
        "Transfer-Encoding: chunked" if chunked else f"Content-Length: {(chunks + 1) * len(CHUNK)}"
    )
    head = (
        f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"{framing}\r\n{headers}\r\n"
    )
    channel.dataReceived(head.encode())
    piece = b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK) if chunked else CHUNK
    for _ in range(chunks):
        channel.dataReceived(piece)
    request = list(server.connections)[-1]  # Daphne tracks each request it serves
    request.content.seek(0, 2)
    kept = request.content.tell(), getattr(request, "discarded", 0)
    channel.connectionLost(Failure(ConnectionDone()))
    return kept


def test_the_server_builds_channels_of_bounded_requests(server):
    """``run()`` assigns Daphne's own factory; the server serves through ours."""
    assert isinstance(server.http_factory, BoundedHTTPFactory)
    channel = server.http_factory.buildProtocol(None)
    assert channel.requestFactory is BoundedRequest


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
def test_an_mcp_request_keeps_at_most_the_limit_plus_one_byte(server, chunked):
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        assert send_unfinished(server, "/mcp", CHUNKS, chunked=chunked) == (
            LIMIT + 1,
            CHUNKS * len(CHUNK) - LIMIT - 1,
        )


def test_the_query_string_and_the_root_path_are_routed_as_django_routes_them(server):
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        assert send_unfinished(server, "/mcp?x=1", CHUNKS)[0] == LIMIT + 1
        assert (
            send_unfinished(server, "/app/mcp", CHUNKS, "Daphne-Root-Path: /app\r\n")[0]
            == LIMIT + 1
        )


@pytest.mark.parametrize("target", ["/elsewhere", "/admin/", "/app/mcp"])
def test_other_paths_keep_the_whole_body(server, target):
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        assert send_unfinished(server, target, CHUNKS) == (CHUNKS * len(CHUNK), 0)


def test_a_body_within_the_limit_is_kept_whole(server):
    with override_mcp(MAX_REQUEST_BYTES=LIMIT):
        assert send_unfinished(server, "/mcp", LIMIT // len(CHUNK)) == (LIMIT, 0)


def test_both_daphne_entry_points_serve_with_the_bounded_server():
    """``python -m django_mcp.http.daphne`` and, with ``"daphne"`` installed (as in the
    testproject), Daphne's ``manage.py runserver``."""
    assert CommandLineInterface.server_class is Server
    assert issubclass(Server, DaphneServer)
    assert RunserverCommand.server_cls is Server


FORM_TYPES = [
    "multipart/form-data; boundary=xyz",  # a body that is not the multipart it claims
    "application/x-www-form-urlencoded",
]


def send_whole(server: Server, target: str, content_type: str, body: bytes) -> bytes:
    """Feed one complete POST to a channel of ``server``; return what the channel wrote
    back itself (the application never runs here: ``process`` is replaced in the test)."""
    channel = server.http_factory.buildProtocol(None)
    transport = StringTransport()
    channel.makeConnection(transport)
    head = (
        f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    channel.dataReceived(head.encode() + body)
    written = transport.value()
    channel.connectionLost(Failure(ConnectionDone()))
    return bytes(written)


@pytest.mark.parametrize("content_type", FORM_TYPES)
def test_an_mcp_body_sent_as_a_form_reaches_the_application_unparsed(
    server, monkeypatch, content_type
):
    """Twisted parses a POST sent as a form into ``Request.args`` (Daphne never reads them)
    and answers a body that is not the multipart it claims with a bare 400 of its own,
    before the application runs: an MCP request the log never saw, served everywhere else
    (servers are lenient about ``Content-Type``: basic/transports/streamable-http.mdx
    defines no status for it). For an MCP endpoint the body goes to the application as
    sent; the live check is in ``test_form_content_type_live.py``."""
    processed: list[tuple[bytes, dict[bytes, list[bytes]]]] = []

    def process(request: BoundedRequest) -> None:  # what the application would be given
        processed.append((request.content.read(), request.args))

    monkeypatch.setattr(BoundedRequest, "process", process)
    body = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"a":"b=c&d"}}'
    assert send_whole(server, "/mcp", content_type, body) == b""
    assert processed == [(body, {})]


def test_other_paths_keep_twisteds_form_parse(server, monkeypatch):
    """Only MCP endpoints are changed: elsewhere a false multipart body still gets
    Twisted's 400, as with plain Daphne."""
    processed: list[BoundedRequest] = []
    monkeypatch.setattr(BoundedRequest, "process", lambda request: processed.append(request))
    written = send_whole(server, "/elsewhere", FORM_TYPES[0], b'{"not": "multipart"}')
    assert written.startswith(b"HTTP/1.1 400 Bad Request")
    assert processed == []
