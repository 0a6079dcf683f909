"""Access tokens issued by a co-hosted django-oauth-toolkit (DOT) authorization server.

The token is looked up in DOT's own table the way DOT does (by the SHA-256 checksum of the
token), so no network call is made. It must exist (a revoked token is deleted), be
unexpired, and carry this server's canonical URI among the RFC 8707 ``resource``
indicators DOT recorded when the client asked for it. DOT treats a token with no resource
as unrestricted; an MCP server must not (``basic/authorization.mdx``: only tokens issued
for this server), so such a token is refused here. Scopes are the token's ``scope``.
:func:`caller_for_token` is that check, shared with the DRF bridge, which meets DOT's
tokens through DOT's own DRF class.

:func:`resource_validator` is the same RFC 8707 check for DOT's own protected views
(``OAUTH2_PROVIDER["RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR"]``): an exact match of
canonical URIs instead of DOT's default prefix match.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, ClassVar

from django.contrib.auth.models import AnonymousUser
from oauth2_provider.models import get_access_token_model

from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.caller import Caller
from django_mcp.auth.oauth.audience import audience_matches, canonical_uri
from django_mcp.auth.oauth.bearer import BearerAuthenticator, bearer_token
from django_mcp.auth.oauth.claims import require_audience, scopes_of
from django_mcp.auth.oauth.config import oauth_config

if TYPE_CHECKING:
    from django.http import HttpRequest


class DOTAuthenticator(BearerAuthenticator):
    """Bearer tokens from django-oauth-toolkit's ``AccessToken`` table."""

    #: The ``DJANGO_MCP["OAUTH"]`` keys this validator cannot work without (check E012).
    required_oauth_settings: ClassVar[tuple[str, ...]] = ("RESOURCE",)

    def authenticate(self, request: HttpRequest) -> Caller | None:
        token = bearer_token(request)
        if token is None:
            return None
        checksum = hashlib.sha256(token.encode("utf-8")).hexdigest()
        access_token = (
            get_access_token_model()
            .objects.select_related("user", "application")
            .filter(token_checksum=checksum)
            .first()
        )
        if access_token is None:
            raise AuthenticationFailed("The token is unknown or revoked.")
        return caller_for_token(access_token, method=self.method)


def caller_for_token(access_token: Any, *, method: str) -> Caller:
    """The caller a row of DOT's access token table vouches for, or
    :class:`AuthenticationFailed`: the token must be unexpired, issued for this server (its
    ``resource`` names ``RESOURCE``; none is refused), and its user active. Scopes are its
    ``scope``, the credential ``dot:<pk>`` (which :mod:`~django_mcp.auth.revocation` reads
    again). :class:`DOTAuthenticator` and, for the tokens DOT's DRF class
    ``OAuth2Authentication`` accepts, :class:`~django_mcp.auth.drf.DRFAuthenticator` both
    use it, so a DOT token means the same whichever way it came in. Raises
    ``ImproperlyConfigured`` without ``RESOURCE`` (check ``django_mcp.E012``)."""
    config = oauth_config()
    if access_token.is_expired():
        raise AuthenticationFailed("The token has expired.")
    require_audience({"resource": access_token.resource}, config.resources)
    user = access_token.user
    if user is None:
        user = AnonymousUser()  # client_credentials: the client acts for itself
    elif not user.is_active:
        raise AuthenticationFailed("The token's user is inactive.")
    return Caller(
        user=user,
        scopes=scopes_of({"scope": access_token.scope}),
        credential=f"dot:{access_token.pk}",
        method=method,
        client=getattr(access_token.application, "client_id", None),
        expires_at=access_token.expires.timestamp() if access_token.expires else None,
    )


def resource_validator(request_uri: str, audiences: list[str]) -> bool:
    """DOT's ``RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR`` with exact RFC 8707 matching."""
    return audience_matches(audiences, frozenset({canonical_uri(request_uri)}))
