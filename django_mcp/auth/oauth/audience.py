"""RFC 8707 audience binding: accept only tokens issued for this server.

``basic/authorization.mdx`` requires an MCP server to reject every token whose audience
does not name it. A token names its audience in ``aud`` (JWT, RFC 7519; introspection,
RFC 7662) or ``resource``; either may be a string or an array. The comparison is exact
after the light normalisation the spec asks servers to tolerate: scheme and host are
case-insensitive, and ``https://host/mcp/`` names the same resource as ``https://host/mcp``.
No prefix matching: a token for ``https://host`` is not a token for ``https://host/mcp``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit


def canonical_uri(uri: str) -> str:
    """``uri`` with lowercase scheme and host and no trailing slash (nor fragment)."""
    parts = urlsplit(uri.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _values(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, str)]
    return []


def token_audiences(claims: Mapping[str, Any]) -> list[str]:
    """Every audience a token's claims name, from ``aud`` and ``resource``."""
    return _values(claims.get("aud")) + _values(claims.get("resource"))


def audience_matches(audiences: Iterable[str], resources: frozenset[str]) -> bool:
    """Whether any of ``audiences`` is one of this server's canonical URIs."""
    return any(canonical_uri(audience) in resources for audience in audiences)
