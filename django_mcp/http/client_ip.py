"""The client's address, for per-IP rate limits and listen-stream counts.

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

Limits count an IPv6 client by its network (:func:`counted_address`, the first
``IPV6_PREFIX`` bits, 64 by default): one subscriber is usually given a whole /64, so
counted one address at a time it could take a fresh address for every request and never
meet a per-IP limit.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Final

from django_mcp.conf import mcp_settings


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


def counted_address(meta: Mapping[str, Any]) -> str | None:
    """The identity per-address limits count a request with ``META`` ``meta`` under: its
    client address (:func:`client_ip`), an IPv6 one as its ``IPV6_PREFIX`` network."""
    address = client_ip(meta, int(mcp_settings.TRUSTED_PROXY_HOPS))
    return None if address is None else address_block(address, int(mcp_settings.IPV6_PREFIX))


def address_block(address: str, ipv6_prefix: int) -> str:
    """``address`` as limits count it: an IPv6 address as its network of ``ipv6_prefix``
    bits (``2001:db8::/64``, without a zone id), an IPv4-mapped one as its IPv4 address,
    either without the port some proxies append (``192.0.2.7:50001``,
    ``[2001:db8::1]:50001``: the client picks its source port, so counted with it each
    connection would be a new client); anything else as it came (IPv4 addresses, and text
    that is no address: the limits still count it)."""
    if ":" not in address:
        return address  # the common case, at no cost
    address = without_port(address)
    if ":" not in address:
        return address
    try:
        parsed = ipaddress.IPv6Address(address.strip().partition("%")[0])
    except ValueError:
        return address
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    host_bits = 128 - ipv6_prefix
    network = ipaddress.IPv6Address(int(parsed) >> host_bits << host_bits)
    return f"{network}/{ipv6_prefix}"


#: ``IPv4:port`` and ``[IPv6]:port``, as a proxy may write a client into
#: ``X-Forwarded-For`` (RFC 7239 section 6 writes a node the same way).
_WITH_PORT: Final = re.compile(r"\A(?:(\d{1,3}(?:\.\d{1,3}){3})|\[([^\]]+)\])(?::\d*)?\Z")


def without_port(address: str) -> str:
    """``address`` without a port (and an IPv6 one without its brackets); the request log
    records the client so too."""
    found = _WITH_PORT.match(address.strip())
    if found is None:
        return address
    return found[1] or found[2]
