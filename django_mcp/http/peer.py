"""Whether a WSGI client has hung up, for the streams that wait on events.

Under WSGI the server learns that a client left only when a write fails. A listen stream
writes only on a change or a keep-alive (``LISTEN_KEEPALIVE_SECONDS``), and the first write
after the client left usually succeeds (the kernel buffers it): such a stream held its
worker thread and its place in the stream limits for up to two keep-alive intervals after
its client had gone. A client that closed and reopened a few streams in that time (the
conformance suite does) was refused: 429 once its caller's count (five) was used up by
streams nobody read.

WSGI has no standard way to ask. gunicorn puts the client's socket in the environ
(``gunicorn.socket``), and waitress offers ``waitress.client_disconnected`` (which only
changes when waitress runs with ``channel_request_lookahead`` above 0); for those,
:func:`hang_up_probe` returns a check the stream runs at each of its polls. Other servers
get none and keep the keep-alive bound.

The socket is only polled, never read: a read could take a pipelined request's bytes, and
on a socket with a timeout it could wait that long. ``POLLHUP``/``POLLERR`` (both
directions closed, or reset) mean the client is gone. End-of-file alone (``POLLRDHUP``)
is not enough: a client may shut down its sending side and go on reading. So the stream
answers it with one keep-alive at once: a client that really closed answers that with a
reset, which the next poll sees; one that only half-closed reads it and stays.
"""

from __future__ import annotations

import select
import socket
import ssl
from collections.abc import Callable, Mapping
from typing import Any, Final

from django_mcp.listen.listener import PeerState

#: Linux's "the peer shut down its sending side"; without it a socket is not probed.
_RDHUP: Final = getattr(select, "POLLRDHUP", 0)
_GONE: Final = select.POLLHUP | select.POLLERR | select.POLLNVAL


def hang_up_probe(environ: Mapping[str, Any]) -> Callable[[], PeerState] | None:
    """A check of the request's client connection (``"open"``, ``"half-closed"`` or
    ``"gone"``), or None when this server gives no way to tell."""
    disconnected = environ.get("waitress.client_disconnected")
    if callable(disconnected):
        return lambda: "gone" if disconnected() else "open"
    sock = environ.get("gunicorn.socket")
    # A TLS socket's state is the TLS layer's as much as the connection's: left to the
    # keep-alives, as are servers behind a TLS-terminating proxy (the proxy hangs up too).
    if _RDHUP and isinstance(sock, socket.socket) and not isinstance(sock, ssl.SSLSocket):
        return lambda: peer_state(sock)
    return None


def peer_state(sock: socket.socket) -> PeerState:
    """What ``poll`` says of the connection of ``sock``, at once and without reading."""
    try:
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN | _RDHUP)
        ready = poller.poll(0)
    except (OSError, ValueError):  # already closed here (fileno -1)
        return "gone"
    events = ready[0][1] if ready else 0
    if events & _GONE:
        return "gone"
    if events & _RDHUP:
        return "half-closed"
    return "open"
