"""``Origin`` validation against DNS rebinding (basic/transports/streamable-http.mdx,
"Security Warning"): a present, disallowed ``Origin`` gets 403.

The allow-list is the ``ALLOWED_ORIGINS`` setting (full origins such as
``https://app.example.com``, or ``"*"``); when it is None the origin's host must pass
``ALLOWED_HOSTS``. Loopback origins are always accepted. A request without ``Origin``
(non-browser clients) is allowed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Final
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


def is_loopback(hostname: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1) -- not a DNS name that
    merely starts with ``127.``, which an attacker can register and rebind."""
    if hostname in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str, allowed_origins: Sequence[str] | None) -> bool:
    """Whether a request carrying this ``Origin`` header may use the endpoint."""
    if origin == "null":
        return False
    try:
        parts = urlsplit(origin)
        hostname = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not hostname:
        return False
    # An origin is scheme://host[:port] and nothing else (RFC 6454, section 6.1). urlsplit
    # takes the host after the last "@", so "http://user@evil@localhost" would pass as
    # loopback: userinfo, a path, a query or a fragment make the header invalid.
    if "@" in parts.netloc or parts.path not in ("", "/") or parts.query or parts.fragment:
        return False
    if any(char in origin for char in "?#\\ ") or not origin.isprintable():
        return False
    if is_loopback(hostname):
        return True
    if allowed_origins is not None:
        return "*" in allowed_origins or origin.rstrip("/") in {
            item.rstrip("/") for item in allowed_origins
        }
    domain, _ = split_domain_port(parts.netloc)
    allowed_hosts = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed_hosts)
