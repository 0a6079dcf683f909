"""``DJANGO_MCP["OAUTH"]``: the resource server's OAuth configuration, one dict.

The dict is merged over :data:`OAUTH_DEFAULTS`; :func:`problems` says what is wrong with a
value (the system check reports it as ``django_mcp.E004``), and :func:`oauth_config` reads
the current, validated configuration for the authenticators (an invalid one raises
``ImproperlyConfigured`` rather than validating tokens against a half-read configuration).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from django_mcp.auth.oauth.audience import canonical_uri
from django_mcp.conf import mcp_settings

OAUTH_DEFAULTS: Final[dict[str, Any]] = {
    "RESOURCE": None,
    "ISSUER": None,
    "JWKS_URL": None,
    "ALGORITHMS": ["RS256", "ES256"],
    "LEEWAY_SECONDS": 30,
    "TOKEN_TYPES": None,
    "JWKS_CACHE_SECONDS": 300,
    "JWKS_MIN_REFETCH_SECONDS": 30,
    "INTROSPECTION_URL": None,
    "INTROSPECTION_CLIENT_ID": None,
    "INTROSPECTION_CLIENT_SECRET": None,
    "INTROSPECTION_CACHE_SECONDS": 60,
    "HTTP_TIMEOUT_SECONDS": 5,
    "USER_CLAIM": "sub",
    "USER_FIELD": "username",
    "CREATE_USERS": False,
}

#: Asymmetric JWS algorithms only: a shared-secret (HS*) or "none" algorithm would let
#: anyone holding the public JWKS forge tokens (algorithm confusion).
ASYMMETRIC_ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


@dataclass(frozen=True, slots=True)
class OAuthConfig:
    """The validated ``DJANGO_MCP["OAUTH"]``."""

    resources: frozenset[str]
    issuer: str | None
    jwks_url: str | None
    algorithms: tuple[str, ...]
    leeway: float
    #: The JWT ``typ`` header values accepted, lower-cased and without ``application/``;
    #: None: any (or none).
    token_types: frozenset[str] | None
    jwks_cache_seconds: float
    jwks_min_refetch_seconds: float
    introspection_url: str | None
    introspection_client_id: str | None
    introspection_client_secret: str | None
    introspection_cache_seconds: float
    http_timeout: float
    user_claim: str
    user_field: str
    create_users: bool


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def _is_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("https", "http") and bool(parts.netloc) and not parts.fragment


def _resources(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def problems(value: Any) -> list[str]:
    """Everything wrong with a ``DJANGO_MCP["OAUTH"]`` value, one sentence each."""
    if not isinstance(value, dict):
        return ["OAUTH must be a dict."]
    found = [f"Unknown OAUTH key {key!r}." for key in sorted(set(value) - set(OAUTH_DEFAULTS))]
    merged = {**OAUTH_DEFAULTS, **value}
    resources = _resources(merged["RESOURCE"])
    if merged["RESOURCE"] is not None and not (resources and all(map(_is_url, resources))):
        found.append("RESOURCE must be the server's canonical https URI (or a list of them).")
    for key in ("ISSUER", "JWKS_URL", "INTROSPECTION_URL"):
        if merged[key] is not None and not _is_url(merged[key]):
            found.append(f"{key} must be an http(s) URL or None.")
    algorithms = merged["ALGORITHMS"]
    if not (
        isinstance(algorithms, list | tuple)
        and algorithms
        and set(algorithms) <= ASYMMETRIC_ALGORITHMS
    ):
        found.append(
            f"ALGORITHMS must list asymmetric algorithms: {sorted(ASYMMETRIC_ALGORITHMS)}."
        )
    types = merged["TOKEN_TYPES"]
    if types is not None and not (
        isinstance(types, list | tuple) and types and all(isinstance(t, str) and t for t in types)
    ):
        found.append('TOKEN_TYPES must be None or a list of JWT "typ" values (["at+jwt"]).')
    for key in (
        "LEEWAY_SECONDS",
        "JWKS_CACHE_SECONDS",
        "JWKS_MIN_REFETCH_SECONDS",
        "INTROSPECTION_CACHE_SECONDS",
        "HTTP_TIMEOUT_SECONDS",
    ):
        if not _is_number(merged[key]):
            found.append(f"{key} must be a number of seconds (0 or more).")
    for key in ("USER_CLAIM", "USER_FIELD"):
        if not (isinstance(merged[key], str) and merged[key]):
            found.append(f"{key} must be a non-empty string.")
    if not isinstance(merged["CREATE_USERS"], bool):
        found.append("CREATE_USERS must be True or False.")
    if merged["INTROSPECTION_URL"] and not merged["INTROSPECTION_CLIENT_ID"]:
        found.append("INTROSPECTION_URL needs INTROSPECTION_CLIENT_ID (and usually _SECRET).")
    return found


def audience_setting(value: Any) -> Any:
    """The audience setting in force: ``OAUTH["RESOURCE"]``, else ``DJANGO_MCP["RESOURCE"]``
    (the metadata's ``resource``): one canonical URI serves both when set once."""
    own = value.get("RESOURCE") if isinstance(value, dict) else None
    return own or mcp_settings.RESOURCE


def oauth_config() -> OAuthConfig:
    """The current configuration; raises ``ImproperlyConfigured`` when it is invalid or has
    no ``RESOURCE`` (without a canonical URI no token's audience can be checked; check
    ``django_mcp.E012`` reports that at start-up)."""
    value = mcp_settings.OAUTH
    found = problems(value)
    audience = audience_setting(value)
    if not found and not audience:
        found = ["RESOURCE (this server's canonical URI) is required to validate tokens."]
    if found:
        raise ImproperlyConfigured("DJANGO_MCP['OAUTH']: " + " ".join(found))
    merged = {**OAUTH_DEFAULTS, **value}
    return OAuthConfig(
        resources=frozenset(canonical_uri(uri) for uri in _resources(audience)),
        issuer=merged["ISSUER"],
        jwks_url=merged["JWKS_URL"],
        algorithms=tuple(merged["ALGORITHMS"]),
        leeway=float(merged["LEEWAY_SECONDS"]),
        token_types=None
        if merged["TOKEN_TYPES"] is None
        else frozenset(t.lower().removeprefix("application/") for t in merged["TOKEN_TYPES"]),
        jwks_cache_seconds=float(merged["JWKS_CACHE_SECONDS"]),
        jwks_min_refetch_seconds=float(merged["JWKS_MIN_REFETCH_SECONDS"]),
        introspection_url=merged["INTROSPECTION_URL"],
        introspection_client_id=merged["INTROSPECTION_CLIENT_ID"],
        introspection_client_secret=merged["INTROSPECTION_CLIENT_SECRET"],
        introspection_cache_seconds=float(merged["INTROSPECTION_CACHE_SECONDS"]),
        http_timeout=float(merged["HTTP_TIMEOUT_SECONDS"]),
        user_claim=merged["USER_CLAIM"],
        user_field=merged["USER_FIELD"],
        create_users=merged["CREATE_USERS"],
    )
