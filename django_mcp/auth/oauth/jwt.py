"""JWT access tokens (RFC 9068) verified against the authorization server's JWKS.

Validation per OAuth 2.1 section 5.2 on every request: the signature with a key from
``JWKS_URL`` (asymmetric ``ALGORITHMS`` only), ``exp``, ``nbf`` and ``iat`` with
``LEEWAY_SECONDS``, ``iss`` equal to ``ISSUER``, and the audience (``aud`` or ``resource``)
naming this server's ``RESOURCE`` (RFC 8707). Any failure is a 401 ``invalid_token``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

import jwt
from jwt.exceptions import PyJWTError

from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.caller import Caller
from django_mcp.auth.header import presented
from django_mcp.auth.oauth.bearer import BearerAuthenticator, bearer_token, is_single_token
from django_mcp.auth.oauth.claims import require_audience
from django_mcp.auth.oauth.config import OAuthConfig, oauth_config
from django_mcp.auth.oauth.jwks import key_set
from django_mcp.auth.oauth.users import caller_for_claims

if TYPE_CHECKING:
    from django.http import HttpRequest


def _looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2


class JWTAuthenticator(BearerAuthenticator):
    """Bearer JWTs signed by the keys at ``DJANGO_MCP["OAUTH"]["JWKS_URL"]``.

    A bearer token that is not a JWT at all (no two dots) is left to the next authenticator
    (an opaque token for introspection); a JWT that fails any check is refused.
    """

    #: The ``DJANGO_MCP["OAUTH"]`` keys this validator cannot work without (check E012).
    required_oauth_settings: ClassVar[tuple[str, ...]] = ("RESOURCE", "JWKS_URL", "ISSUER")

    def has_credentials(self, request: HttpRequest) -> bool:
        """A bearer header whose token looks like a JWT (or is malformed, to be refused);
        without one the request stays on the event loop and other authenticators decide."""
        token = presented(request)
        return token is not None and (not is_single_token(token) or _looks_like_jwt(token))

    def authenticate(self, request: HttpRequest) -> Caller | None:
        token = bearer_token(request)
        if token is None or not _looks_like_jwt(token):
            return None
        config = oauth_config()
        claims = self.validate(token, config)
        return caller_for_claims("jwt", token, claims, config, method=self.method)

    def validate(self, token: str, config: OAuthConfig) -> dict[str, Any]:
        """The claims of a valid token for this server, or raise AuthenticationFailed."""
        if not config.jwks_url or not config.issuer:
            raise AuthenticationFailed("JWT validation is not configured (JWKS_URL, ISSUER).")
        try:
            header = jwt.get_unverified_header(token)
        except PyJWTError as exc:
            # The library's text may quote the unverified header (its crit, say): never
            # echoed into a challenge, only its kind.
            raise AuthenticationFailed(f"The token is not a valid JWT ({_kind(exc)}).") from exc
        if header.get("alg") not in config.algorithms:
            raise AuthenticationFailed("The token's signing algorithm is not accepted.")
        if config.token_types is not None and not _typ_accepted(header, config.token_types):
            # RFC 9068 section 4: an access token says so (typ "at+jwt"), which tells it
            # from an ID token or any other JWT the same issuer signs for this audience.
            raise AuthenticationFailed("The token is not an access token (typ).")
        kid = header.get("kid")
        keys = key_set(
            config.jwks_url,
            max_age=config.jwks_cache_seconds,
            min_refetch_interval=config.jwks_min_refetch_seconds,
            timeout=config.http_timeout,
        )
        key = keys.key_for(kid if isinstance(kid, str) else None)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=list(config.algorithms),
                issuer=config.issuer,
                leeway=config.leeway,
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except PyJWTError as exc:
            raise AuthenticationFailed(_refusal(exc)) from exc
        # PyJWT compares aud verbatim; RFC 8707 binding also accepts a resource claim and
        # tolerates case in scheme and host, so the audience is checked here.
        require_audience(claims, config.resources)
        return claims


def _typ_accepted(header: dict[str, Any], accepted: frozenset[str]) -> bool:
    """Whether the header's ``typ`` is one of ``accepted``: media types compare without
    case, and ``application/`` may be left out (RFC 7515 section 4.1.9)."""
    typ = header.get("typ")
    if not isinstance(typ, str):
        return False
    return typ.lower().removeprefix("application/") in accepted


def _kind(exc: PyJWTError) -> str:
    """What went wrong, as PyJWT's exception class names it (``DecodeError``): fixed
    text, where the message may quote the token's own, attacker-chosen values."""
    return type(exc).__name__


#: Fixed descriptions of the refusals a client can act on; any other is "invalid".
_REFUSALS: Final[dict[type[PyJWTError], str]] = {
    jwt.ExpiredSignatureError: "The token has expired.",
    jwt.ImmatureSignatureError: "The token is not valid yet.",
    jwt.InvalidIssuerError: "The token was issued by another authorization server.",
    jwt.MissingRequiredClaimError: "The token lacks a required claim (exp, iss).",
    jwt.InvalidSignatureError: "The token's signature is invalid.",
}


def _refusal(exc: PyJWTError) -> str:
    for kind, text in _REFUSALS.items():
        if isinstance(exc, kind):
            return text
    return f"The token is invalid ({_kind(exc)})."
