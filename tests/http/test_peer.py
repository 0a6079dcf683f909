"""Telling that a WSGI client hung up, for the listen streams that wait on events.

basic/patterns/subscriptions.mdx: a listen stream stays open until the client disconnects.
WSGI says nothing of a disconnect until a write fails, so django_mcp.http.peer looks at
what the server hands over (gunicorn's socket, waitress's callable). The socket is polled,
never read. These tests use real TCP connections on loopback;
tests/streams/test_wsgi_listen.py covers the stream under gunicorn.
"""

from __future__ import annotations

import select
import socket
import ssl
import time
from collections.abc import Iterator

import pytest

from django_mcp.http.peer import hang_up_probe, peer_state

pytestmark = pytest.mark.skipif(
    not hasattr(select, "POLLRDHUP"), reason="POLLRDHUP is Linux's: no probe elsewhere"
)


@pytest.fixture
def connection() -> Iterator[tuple[socket.socket, socket.socket]]:
    """The server's end and the client's end of one TCP connection on loopback."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    with server, client:
        yield server, client


def settled(sock: socket.socket, expected: str, patience: float = 5.0) -> str:
    """The state once it is ``expected``, or the last one seen after ``patience`` s
    (loopback delivers a FIN or a reset at once; the wait only bounds a loaded machine)."""
    give_up = time.monotonic() + patience
    while (state := peer_state(sock)) != expected and time.monotonic() < give_up:
        time.sleep(0.01)
    return state


def test_an_open_idle_connection_is_open(connection):
    server, _ = connection
    assert peer_state(server) == "open"


def test_a_client_that_sends_more_is_open_and_keeps_its_bytes(connection):
    """A pipelined request is data, not a hang-up, and the check reads none of it."""
    server, client = connection
    client.sendall(b"POST /mcp HTTP/1.1\r\n")
    assert settled(server, "open") == "open"
    assert server.recv(4) == b"POST"


def test_a_client_that_closed_is_half_closed_until_a_write_is_answered_with_a_reset(
    connection,
):
    """End-of-file alone may be a half-close; the stream's one keep-alive tells."""
    server, client = connection
    client.close()
    assert settled(server, "half-closed") == "half-closed"
    server.sendall(b": keep-alive\n\n")
    assert settled(server, "gone") == "gone"


def test_a_client_that_only_shut_its_sending_side_stays_half_closed(connection):
    """A client may send its request, shut its side (``shutdown(SHUT_WR)``, as
    ``nc -N`` does) and go on reading: the keep-alive reaches it, and it is not gone."""
    server, client = connection
    client.shutdown(socket.SHUT_WR)
    assert settled(server, "half-closed") == "half-closed"
    server.sendall(b": keep-alive\n\n")
    assert client.recv(100) == b": keep-alive\n\n"
    assert peer_state(server) == "half-closed"


def test_bytes_left_unread_do_not_hide_a_close(connection):
    """A stray CRLF after the request, then a close: still seen (a peek would have seen
    the byte and never the end-of-file)."""
    server, client = connection
    client.sendall(b"\r\n")
    client.close()
    assert settled(server, "half-closed") == "half-closed"


def test_a_reset_connection_is_gone(connection):
    server, client = connection
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    client.close()  # linger 0: a reset, not a FIN
    assert settled(server, "gone") == "gone"


def test_urgent_data_neither_blocks_nor_reads_as_gone(connection):
    """Out-of-band data raises only ``POLLPRI``: no read is attempted, so a socket
    timeout is never waited on."""
    server, client = connection
    server.settimeout(30)
    client.send(b"!", socket.MSG_OOB)
    time.sleep(0.05)
    started = time.monotonic()
    assert peer_state(server) == "open"
    assert time.monotonic() - started < 5  # not the 30 s of the socket's timeout


def test_a_socket_the_server_already_closed_is_gone(connection):
    server, _ = connection
    server.close()
    assert peer_state(server) == "gone"


def test_gunicorns_socket_gives_a_probe(connection):
    server, client = connection
    probe = hang_up_probe({"gunicorn.socket": server})
    assert probe is not None
    assert probe() == "open"
    client.close()
    assert settled(server, "half-closed") == "half-closed"
    assert probe() == "half-closed"


def test_waitress_callable_gives_a_probe():
    state = {"gone": False}
    probe = hang_up_probe({"waitress.client_disconnected": lambda: state["gone"]})
    assert probe is not None
    assert probe() == "open"
    state["gone"] = True
    assert probe() == "gone"


def test_a_tls_socket_or_an_unknown_server_gives_none():
    """A TLS socket is left to the keep-alives, as are servers that hand nothing over."""
    tls = ssl.SSLSocket.__new__(ssl.SSLSocket)  # an instance, never connected
    assert hang_up_probe({"gunicorn.socket": tls}) is None
    assert hang_up_probe({"gunicorn.socket": "not a socket"}) is None
    assert hang_up_probe({"wsgi.input": object()}) is None
