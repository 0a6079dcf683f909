"""``SessionAuthenticator``: the user of Django's session, for same-site callers.

The MCP endpoint is CSRF-exempt; what protects a cookie-authenticated request from a
cross-site forgery is the ``Origin`` check, which runs before authentication: browsers
send ``Origin`` on every cross-site POST, and one not in ``ALLOWED_ORIGINS`` is refused
with 403. Session authentication is therefore safe only with a tight ``ALLOWED_ORIGINS``
(never ``"*"``). Sessions carry no scopes: a session caller is limited by Django
permissions alone.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from django.conf import settings

from django_mcp.auth.base import Authenticator
from django_mcp.auth.caller import Caller

if TYPE_CHECKING:
    from django.http import HttpRequest


class SessionAuthenticator(Authenticator):
    """``request.user`` as ``AuthenticationMiddleware`` resolved it from the session."""

    accepts_bearer_tokens = False  # a cookie does not vouch for a token beside it

    def has_credentials(self, request: HttpRequest) -> bool:
        cookies = request.COOKIES
        # No cookies at all (MCP clients rarely send any): no settings read needed.
        return bool(cookies) and settings.SESSION_COOKIE_NAME in cookies

    def authenticate(self, request: HttpRequest) -> Caller | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        session = getattr(request, "session", None)
        key = getattr(session, "session_key", None)
        # A stable, non-secret id: a digest of the session key, never the key itself.
        credential = f"session:{_short_digest(key)}" if key else "session"
        return Caller(user=user, credential=credential, method="session", session_key=key)


def _short_digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]
