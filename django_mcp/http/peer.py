"""Whether a WSGI client has hung up, for the streams that wait on events.

Under WSGI the server learns that a client left only when a write fails. A listen stream
writes only on a change or a keep-alive (``LISTEN_KEEPALIVE_SECONDS``), and the first write
after the client left usually succeeds (the kernel buffers it): such a stream held its
worker thread and its place in the stream limits for up to two keep-alive intervals after
its client had gone. A client that closed and reopened a few streams in that time (the
conformance suite does) was refused: 429 once its caller's count (five) was used up by
streams nobody read.

WSGI has no standard way to ask. gunicorn puts the client's socket in the environ
(``gunicorn.socket``) and waitress a ``waitress.client_disconnected`` callable; for those
servers :func:`hang_up_probe` returns a check that the stream runs at each of its polls. A
closed connection reads as end-of-file; a client that sends more (a pipelined request)
has not hung up. Other servers get no probe and keep the keep-alive bound.
"""

from __future__ import annotations

import select
import socket
import ssl
from collections.abc import Callable, Mapping
from typing import Any

HangUpProbe = Callable[[], bool]


def hang_up_probe(environ: Mapping[str, Any]) -> HangUpProbe | None:
    """A check that is true once the request's client has closed its connection, or
    None when this server gives no way to tell."""
    disconnected = environ.get("waitress.client_disconnected")
    if callable(disconnected):
        return lambda: bool(disconnected())
    sock = environ.get("gunicorn.socket")
    # A TLS socket cannot be peeked at (its reads are records, not bytes): left to the
    # keep-alives, as are servers behind a TLS-terminating proxy (the proxy hangs up too).
    if isinstance(sock, socket.socket) and not isinstance(sock, ssl.SSLSocket):
        return lambda: socket_closed(sock)
    return None


def socket_closed(sock: socket.socket) -> bool:
    """Whether the peer of ``sock`` has closed it (end-of-file or an error), without
    reading anything: the readiness check comes first, so the peek never blocks, whatever
    timeout the server set on the socket."""
    try:
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN | select.POLLPRI)
        if not poller.poll(0):
            return False  # nothing to read: the connection is idle and open
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except (OSError, ValueError):  # reset, or already closed (fileno -1)
        return True
