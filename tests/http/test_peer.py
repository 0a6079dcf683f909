"""Telling that a WSGI client hung up, for the listen streams that wait on events.

basic/patterns/subscriptions.mdx: a listen stream stays open until the client disconnects.
WSGI says nothing of a disconnect until a write fails, so django_mcp.http.peer looks at
what the server hands over (gunicorn's socket, waitress's callable). These tests use real
connected sockets; tests/streams/test_wsgi_listen.py covers the stream under gunicorn.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator

import pytest

from django_mcp.http.peer import hang_up_probe, socket_closed


@pytest.fixture
def connection() -> Iterator[tuple[socket.socket, socket.socket]]:
    """The server's end and the client's end of one TCP connection on loopback."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    with server, client:
        yield server, client


def test_an_open_idle_connection_is_not_closed(connection):
    server, _ = connection
    assert socket_closed(server) is False


def test_the_check_never_waits_on_the_servers_socket_timeout(connection):
    """gunicorn sets a timeout on its sockets; a plain ``recv`` would wait that long on an
    idle connection, then raise (and read as closed). The check looks before it peeks."""
    server, _ = connection
    server.settimeout(30)
    assert socket_closed(server) is False


def test_a_client_that_sends_more_has_not_hung_up(connection):
    """A pipelined request is data, not end-of-file; the peek leaves it unread."""
    server, client = connection
    client.sendall(b"POST /mcp HTTP/1.1\r\n")
    assert socket_closed(server) is False
    assert server.recv(4, socket.MSG_PEEK) == b"POST"


def test_a_client_that_closed_its_end_has_hung_up(connection):
    server, client = connection
    client.close()
    assert socket_closed(server) is True


def test_a_reset_connection_has_hung_up(connection):
    server, client = connection
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    client.close()  # linger 0: an RST, not a FIN
    assert socket_closed(server) is True


def test_a_socket_the_server_already_closed_reads_as_hung_up(connection):
    server, _ = connection
    server.close()
    assert socket_closed(server) is True


def test_gunicorns_socket_gives_a_probe(connection):
    server, client = connection
    probe = hang_up_probe({"gunicorn.socket": server})
    assert probe is not None
    assert probe() is False
    client.close()
    assert probe() is True


def test_waitress_callable_gives_a_probe():
    state = {"gone": False}
    probe = hang_up_probe({"waitress.client_disconnected": lambda: state["gone"]})
    assert probe is not None
    assert probe() is False
    state["gone"] = True
    assert probe() is True


def test_a_tls_socket_or_an_unknown_server_gives_none():
    """A TLS socket's bytes are records: peeking at them says nothing reliable, so the
    stream falls back on its keep-alives, as under servers that hand nothing over."""
    tls = ssl.SSLSocket.__new__(ssl.SSLSocket)  # an instance, never connected
    assert hang_up_probe({"gunicorn.socket": tls}) is None
    assert hang_up_probe({"gunicorn.socket": "not a socket"}) is None
    assert hang_up_probe({"wsgi.input": object()}) is None
