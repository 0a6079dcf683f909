"""``TokenAuthenticator``: ``Authorization: Bearer <token>`` checked against
:class:`~django_mcp.auth.models.AccessToken`.

Tokens are read from that header only, never from the query string or the body (RFC 6750
section 2.1; basic/authorization.mdx, "Access Token Usage"). A bearer token that does not
look like ours is left to the next authenticator (an OAuth validator, say); one that looks
like ours but is unknown, expired or revoked is a 401. ``last_used_at`` is written at most
once per ``TOKEN_LAST_USED_INTERVAL`` seconds, with a conditional UPDATE, so a burst of
requests with one token costs one write, not one per request.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from django.db.models import Q
from django.utils import timezone

from django_mcp.auth.base import AuthenticationFailed, Authenticator
from django_mcp.auth.caller import Caller
from django_mcp.auth.header import presented
from django_mcp.auth.models import TOKEN_PREFIX, AccessToken, digest
from django_mcp.conf import mcp_settings

if TYPE_CHECKING:
    from django.http import HttpRequest


def bearer_token(request: HttpRequest) -> str | None:
    """The token of an ``Authorization: Bearer`` header, or None."""
    return presented(request) or None


class TokenAuthenticator(Authenticator):
    """Access tokens issued by this site (admin or ``manage.py mcp_create_token``)."""

    def has_credentials(self, request: HttpRequest) -> bool:
        token = bearer_token(request)
        return token is not None and token.startswith(TOKEN_PREFIX)

    def authenticate(self, request: HttpRequest) -> Caller | None:
        token = bearer_token(request)
        if token is None or not token.startswith(TOKEN_PREFIX):
            return None
        row = AccessToken.objects.select_related("user").filter(digest=digest(token)).first()
        if row is None:
            raise AuthenticationFailed("The access token is not valid.")
        now = timezone.now()
        if row.revoked_at is not None:
            raise AuthenticationFailed("The access token was revoked.")
        if row.expires_at is not None and row.expires_at <= now:
            raise AuthenticationFailed("The access token has expired.")
        if not row.user.is_active:
            raise AuthenticationFailed("The access token's user is inactive.")
        touch(row, now)
        return Caller(
            user=row.user,
            scopes=row.scope_set,
            credential=f"token:{row.pk}",
            method="token",
            expires_at=None if row.expires_at is None else row.expires_at.timestamp(),
        )

    def challenge(self, request: HttpRequest) -> str | None:
        return "Bearer"


def touch(row: AccessToken, now: datetime.datetime) -> None:
    """Record use, at most once per ``TOKEN_LAST_USED_INTERVAL`` seconds: the UPDATE is
    skipped when the stored time is recent and is conditional on it in the database, so
    concurrent requests write once between them."""
    interval = datetime.timedelta(seconds=float(mcp_settings.TOKEN_LAST_USED_INTERVAL))
    if row.last_used_at is not None and now - row.last_used_at < interval:
        return
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - interval)
    AccessToken.objects.filter(stale, pk=row.pk).update(last_used_at=now)
    row.last_used_at = now
