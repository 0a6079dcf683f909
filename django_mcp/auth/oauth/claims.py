"""Reading token claims shared by every validator: scopes, credential ids, time bounds."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from typing import Any

from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.oauth.audience import audience_matches, token_audiences


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The granted scopes: ``scope`` (space-separated, RFC 8693/9068, RFC 7662) or ``scp``
    (a list or a string, as some authorization servers issue). A token with neither grants
    no scope (it is still scope-limited, unlike a session)."""
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list | tuple):
        return frozenset(item for item in value if isinstance(item, str) and item)
    return frozenset()


def credential_id(kind: str, token: str, claims: Mapping[str, Any]) -> str:
    """A stable, non-secret id of the token: its ``jti`` when it has one, else a digest."""
    jti = claims.get("jti")
    if isinstance(jti, str) and jti:
        return f"{kind}:{jti}"
    return f"{kind}:{hashlib.sha256(token.encode()).hexdigest()[:16]}"


def client_of(claims: Mapping[str, Any]) -> str | None:
    """The ``client_id`` the token was issued to (RFC 9068 section 2.2, RFC 7662 section
    2.2), when it names one."""
    client = claims.get("client_id")
    return client if isinstance(client, str) and client else None


def require_audience(claims: Mapping[str, Any], resources: frozenset[str]) -> None:
    """Refuse a token that was not issued for this server (RFC 8707)."""
    audiences = token_audiences(claims)
    if not audience_matches(audiences, resources):
        raise AuthenticationFailed("The token was not issued for this resource (audience).")


def numeric_date(claims: Mapping[str, Any], name: str) -> float | None:
    """The claim ``name`` when it is a number (an RFC 7519 NumericDate such as ``exp``)."""
    value = claims.get(name)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def require_time_bounds(claims: Mapping[str, Any], leeway: float) -> None:
    """Refuse a token past its ``exp`` or before its ``nbf`` (for claims that no library
    checked, such as an introspection response's)."""
    now = time.time()
    exp, nbf = numeric_date(claims, "exp"), numeric_date(claims, "nbf")
    if exp is not None and now > exp + leeway:
        raise AuthenticationFailed("The token has expired.")
    if nbf is not None and now < nbf - leeway:
        raise AuthenticationFailed("The token is not valid yet.")
