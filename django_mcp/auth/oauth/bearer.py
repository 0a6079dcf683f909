"""The bearer token of a request, from the ``Authorization`` header only.

RFC 6750 also defines form-body and query-string tokens; ``basic/authorization.mdx``
forbids tokens in the query string, and the MCP body is JSON-RPC, so the header is the one
place a token is read from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django_mcp.auth.base import AuthenticationFailed

if TYPE_CHECKING:
    from django.http import HttpRequest


def bearer_token(request: HttpRequest) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, None when the request
    carries no bearer credentials (another authenticator may recognise it)."""
    header: str = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    if not token or " " in token:
        raise AuthenticationFailed("The Authorization header has no single bearer token.")
    return token
