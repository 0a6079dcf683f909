"""The bearer token an OAuth validator takes, from the ``Authorization`` header only
(:func:`~django_mcp.auth.header.presented`), and what every such validator shares."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django_mcp.auth.base import AuthenticationFailed, Authenticator
from django_mcp.auth.header import has_blank, presented

if TYPE_CHECKING:
    from django.http import HttpRequest


def bearer_token(request: HttpRequest) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, None when the request
    carries no bearer credentials (another authenticator may recognise it)."""
    token = presented(request)
    if token is None:
        return None
    if not token or has_blank(token):
        raise AuthenticationFailed("The Authorization header has no single bearer token.")
    return token


def is_single_token(value: str) -> bool:
    """Whether ``value`` (from :func:`presented`) is one well-formed token; a malformed
    header is still this validator's business, so that it is refused with a 401."""
    return bool(value) and not has_blank(value)


class BearerAuthenticator(Authenticator):
    """What every OAuth validator shares: it answers for ``Authorization: Bearer``
    headers, and challenges with ``Bearer``."""

    method = "oauth"

    def has_credentials(self, request: HttpRequest) -> bool:
        """Any ``Authorization: Bearer`` header (no database, no network to decide)."""
        return presented(request) is not None

    def challenge(self, request: HttpRequest) -> str | None:
        return "Bearer"
