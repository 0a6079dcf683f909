"""The client's address, for per-IP rate limits.

By default it is ``REMOTE_ADDR``: the peer of the TCP connection, which a client cannot
forge. Behind reverse proxies that peer is the nearest proxy, so every client would share
one limit; ``TRUSTED_PROXY_HOPS = N`` then takes the address that the outermost of N
trusted proxies saw, the N-th entry from the right of ``X-Forwarded-For`` (each proxy
appends the address it received the request from).

The risk: ``X-Forwarded-For`` is an ordinary request header. Set N higher than the number
of proxies that really append to it and a client chooses its own address (and escapes its
limit, or exhausts somebody else's); set it while the server is also reachable directly and
the same holds. With fewer entries than N the request did not pass through every proxy, so
``REMOTE_ADDR`` is used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def client_ip(meta: Mapping[str, Any], trusted_hops: int) -> str | None:
    """The client address of a request with WSGI/ASGI ``META`` ``meta``."""
    remote = meta.get("REMOTE_ADDR") or None
    if trusted_hops <= 0:
        return remote
    forwarded = [entry.strip() for entry in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
    forwarded = [entry for entry in forwarded if entry]
    if len(forwarded) < trusted_hops:
        return remote
    return forwarded[-trusted_hops]
