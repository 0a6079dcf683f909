"""Opaque access tokens checked at an RFC 7662 introspection endpoint.

Each unseen token is POSTed to ``INTROSPECTION_URL`` with this server's client credentials
(HTTP Basic, RFC 7662 section 2.1). An answer other than ``"active": true`` is a 401, and
so is an active token whose audience is not this server (RFC 8707), whose ``iss`` is not
``ISSUER`` (when set), or whose ``exp``/``nbf`` say it is not valid now. Positive answers
are cached in Django's default cache for ``INTROSPECTION_CACHE_SECONDS``, never past the
token's ``exp``, under a digest of the token (the token itself is never a cache key).
Negative answers are not cached: a token just issued must work on its next request.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import time
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from django.core.cache import cache

from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.caller import Caller
from django_mcp.auth.oauth.bearer import BearerAuthenticator, bearer_token
from django_mcp.auth.oauth.claims import (
    numeric_date,
    require_audience,
    require_time_bounds,
)
from django_mcp.auth.oauth.config import OAuthConfig, oauth_config
from django_mcp.auth.oauth.fetch import FetchError, post_form
from django_mcp.auth.oauth.users import caller_for_claims

if TYPE_CHECKING:
    from django.http import HttpRequest

logger = logging.getLogger("django_mcp.auth")
CACHE_PREFIX = "django_mcp:oauth:introspection:"


def _basic_auth(client_id: str, secret: str) -> str:
    # RFC 6749 section 2.3.1: each part is form-urlencoded before the base64 step.
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


class IntrospectionAuthenticator(BearerAuthenticator):
    """Bearer tokens the authorization server vouches for at ``INTROSPECTION_URL``."""

    #: The ``DJANGO_MCP["OAUTH"]`` keys this validator cannot work without (check E012).
    required_oauth_settings: ClassVar[tuple[str, ...]] = ("RESOURCE", "INTROSPECTION_URL")

    def authenticate(self, request: HttpRequest) -> Caller | None:
        token = bearer_token(request)
        if token is None:
            return None
        config = oauth_config()
        claims = self.validate(token, config)
        return caller_for_claims("introspected", token, claims, config, method=self.method)

    def validate(self, token: str, config: OAuthConfig) -> dict[str, Any]:
        """The introspection claims of an active token for this server, or raise.

        An answer is cached per token and introspection endpoint, and checked again on
        every use (active, issuer, audience, time bounds): a cache shared with another
        service, or settings changed since, must not let a token through that this
        server's checks would refuse now."""
        digest = hashlib.sha256(f"{config.introspection_url}\n{token}".encode()).hexdigest()
        key = CACHE_PREFIX + digest
        claims = cache.get(key)
        if isinstance(claims, dict):
            self._check(claims, config)
            return claims
        claims = self._introspect(token, config)
        self._check(claims, config)
        lifetime = config.introspection_cache_seconds
        exp = numeric_date(claims, "exp")
        if exp is not None:
            lifetime = min(lifetime, exp - time.time())
        if lifetime > 0:
            cache.set(key, claims, lifetime)
        return claims

    def _introspect(self, token: str, config: OAuthConfig) -> dict[str, Any]:
        if not config.introspection_url or not config.introspection_client_id:
            raise AuthenticationFailed("Token introspection is not configured.")
        headers = {
            "Authorization": _basic_auth(
                config.introspection_client_id, config.introspection_client_secret or ""
            )
        }
        form = {"token": token, "token_type_hint": "access_token"}
        try:
            return post_form(
                config.introspection_url, form, headers=headers, timeout=config.http_timeout
            )
        except FetchError as exc:
            logger.warning("Token introspection failed: %s", exc)
            raise AuthenticationFailed("The token could not be introspected.") from exc

    def _check(self, claims: dict[str, Any], config: OAuthConfig) -> None:
        if claims.get("active") is not True:
            raise AuthenticationFailed("The token is not active.")
        issuer = claims.get("iss")
        if config.issuer and issuer is not None and issuer != config.issuer:
            raise AuthenticationFailed("The token was issued by another authorization server.")
        require_time_bounds(claims, config.leeway)
        require_audience(claims, config.resources)
