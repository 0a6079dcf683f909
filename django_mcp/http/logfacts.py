"""What the request log learns from the HTTP request and response themselves.

Why a module of its own: the exchange builds the record from the admission and the reply,
but some facts exist only at the HTTP level. The client address and ``User-Agent`` are
taken when the exchange begins (each behind a setting, since both identify people). And a
request refused before admission (401, 403, 413, 429) has no admission to read its error
from: its JSON-RPC error body, the very message the client received, is read back here,
so every refused row carries its code and message.
"""

from __future__ import annotations

import ipaddress
import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from django_mcp.conf import mcp_settings
from django_mcp.http.client_ip import client_ip, without_port

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase

#: Longest stored ``User-Agent`` (the column's length).
USER_AGENT_CHARS: Final = 300
#: A refusal's body is read back only when it is a small JSON document (it always is).
_ERROR_BODY_BYTES: Final = 16_384
#: Longest address text whose parse is cached (an IPv6 address with a short zone id).
_CACHED_ADDRESS_CHARS: Final = 64


def remote_addr(request: HttpRequest) -> str | None:
    """The client address (``REQUEST_LOG_REMOTE_ADDR``), or None when off or not an address.

    Behind ``TRUSTED_PROXY_HOPS`` proxies the address comes from ``X-Forwarded-For``, which
    is text a proxy or a client wrote: only a valid IP address reaches the column.
    """
    if not mcp_settings.REQUEST_LOG_REMOTE_ADDR:
        return None
    found = client_ip(request.META, int(mcp_settings.TRUSTED_PROXY_HOPS))
    if not found:
        return None
    if ":" in found:  # a port a proxy appended (``192.0.2.7:50001``) is not the address
        found = without_port(found)
    # Parsed once per address seen (a server sees the same clients again and again); only
    # short texts are cached, so forged X-Forwarded-For values cannot fill memory.
    return _cached_address(found) if len(found) <= _CACHED_ADDRESS_CHARS else _address(found)


def _address(text: str) -> str | None:
    """``text`` as a normalised IP address, or None when it is not one.

    An IPv6 zone id (``fe80::1%eth0``) is dropped: PostgreSQL's ``inet`` has no place for
    one, and refuses the text with it, so a row that went in ``COPY``'s text format (or
    the row-by-row retry) was lost, while the binary format stored the address without it.
    """
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
        address = ipaddress.IPv6Address(address.packed)
    return str(address)


_cached_address = lru_cache(maxsize=1024)(_address)


def user_agent(request: HttpRequest) -> str:
    """The ``User-Agent`` header, cut to its column (``REQUEST_LOG_USER_AGENT``)."""
    if not mcp_settings.REQUEST_LOG_USER_AGENT:
        return ""
    # From META, not request.headers: that mapping parses every header to build itself.
    return str(request.META.get("HTTP_USER_AGENT", ""))[:USER_AGENT_CHARS]


def response_error(response: HttpResponseBase) -> tuple[int | None, str]:
    """The JSON-RPC error ``(code, message)`` a refusal sent, or ``(None, "")``."""
    if response.streaming or response.status_code < 400:
        return None, ""
    if not str(response.get("Content-Type", "")).startswith("application/json"):
        return None, ""
    content: bytes = getattr(response, "content", b"")
    if len(content) > _ERROR_BODY_BYTES:
        return None, ""
    try:
        error: Any = json.loads(content).get("error")
    except (ValueError, AttributeError):
        return None, ""
    if not isinstance(error, dict):
        return None, ""
    code, message = error.get("code"), error.get("message")
    return (
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        message if isinstance(message, str) else "",
    )
