"""``django_mcp.E012``: an OAuth validator listed in ``AUTHENTICATORS`` without the
``DJANGO_MCP["OAUTH"]`` settings it needs; ``django_mcp.W014``: one listed while the
protected resource metadata names no authorization server.

Each validator class names its required keys in ``required_oauth_settings``, or works them
out from other settings when that is a function (``DRFAuthenticator`` needs ``RESOURCE``
when it runs django-oauth-toolkit's DRF class, whose tokens it checks); a missing one
would otherwise surface as ``ImproperlyConfigured`` (a 500) on the first request that
carries a token, or as every token refused. ``RESOURCE`` counts as set when either
``OAUTH["RESOURCE"]`` or ``DJANGO_MCP["RESOURCE"]`` is. When both are set, the metadata's
``resource`` must be one of the audiences the validators accept, or clients would ask for
tokens this server refuses. A class that cannot be imported is left alone here (its
optional dependency is missing: Django reports the import error when it is used).
"""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Warning
from django.utils.module_loading import import_string

from django_mcp.auth.oauth.audience import canonical_uri
from django_mcp.auth.oauth.config import audience_setting
from django_mcp.conf import mcp_settings

CHECK_ID = "django_mcp.E012"
NO_AUTHORIZATION_SERVER_ID = "django_mcp.W014"


def _required(path: str) -> tuple[str, ...]:
    try:
        cls = import_string(path)
    except ImportError:
        return ()
    required = getattr(cls, "required_oauth_settings", ())
    if callable(required):
        try:
            required = required()
        except ImportError:  # a class it names cannot be imported: reported when used
            return ()
    return tuple(required) if isinstance(required, tuple | list) else ()


def _is_set(key: str, oauth: dict[str, Any]) -> bool:
    if key == "RESOURCE":
        return bool(audience_setting(oauth))
    return bool(oauth.get(key))


def _audiences(value: Any) -> set[str]:
    values = value if isinstance(value, list | tuple) else [value]
    return {canonical_uri(item) for item in values if isinstance(item, str)}


def check_oauth_authenticators() -> list[CheckMessage]:
    """E012 for each listed validator that lacks a required OAuth setting, and when the
    metadata's ``RESOURCE`` is not an audience the validators accept."""
    paths = mcp_settings.AUTHENTICATORS
    oauth = mcp_settings.OAUTH
    if not isinstance(paths, list | tuple) or not isinstance(oauth, dict):
        return []  # E004 reports the malformed setting
    messages: list[CheckMessage] = []
    oauth_listed = False
    for path in paths:
        required = _required(path) if isinstance(path, str) else ()
        oauth_listed = oauth_listed or bool(required)
        missing = [key for key in required if not _is_set(key, oauth)]
        if missing:
            keys = ", ".join(f"OAUTH[{key!r}]" for key in missing)
            messages.append(
                Error(
                    f"{path} is in AUTHENTICATORS but DJANGO_MCP lacks {keys}.",
                    hint="Set them (docs/guides/oauth.md); RESOURCE may be set once as "
                    "DJANGO_MCP['RESOURCE'].",
                    id=CHECK_ID,
                )
            )
    metadata, audience = mcp_settings.RESOURCE, oauth.get("RESOURCE")
    if oauth_listed and metadata and audience and not _audiences(metadata) & _audiences(audience):
        messages.append(
            Error(
                f"DJANGO_MCP['RESOURCE'] ({metadata}) is not among OAUTH['RESOURCE']: the "
                "metadata would send clients for tokens the validators refuse.",
                hint="Set RESOURCE once (DJANGO_MCP['RESOURCE']) and drop OAUTH['RESOURCE'], "
                "or list the same URI in both.",
                id=CHECK_ID,
            )
        )
    return messages


def check_authorization_servers() -> list[CheckMessage]:
    """W014 when an OAuth validator is listed and ``AUTHORIZATION_SERVERS`` is empty.

    The RFC 9728 document then says ``"authorization_servers": []``, and an MCP client
    that starts from a 401 has nowhere to ask for a token: the specification requires at
    least one issuer (basic/authorization.mdx). Easy to miss where the project is its own
    authorization server (django-oauth-toolkit), since the validator works without it. A
    warning, not an error: tokens obtained some other way are still accepted."""
    paths = mcp_settings.AUTHENTICATORS
    servers = mcp_settings.AUTHORIZATION_SERVERS
    if not isinstance(paths, list | tuple) or not isinstance(servers, list | tuple):
        return []  # E004 reports the malformed setting
    listed = [path for path in paths if isinstance(path, str) and _required(path)]
    if not listed or servers:
        return []
    return [
        Warning(
            f"{listed[0]} is in AUTHENTICATORS but DJANGO_MCP['AUTHORIZATION_SERVERS'] is "
            "empty: the protected resource metadata names no authorization server, so an "
            "MCP client cannot find where to obtain a token.",
            hint="List the issuer of each authorization server, e.g. "
            "'AUTHORIZATION_SERVERS': ['https://auth.example.com']: usually OAUTH['ISSUER'], "
            "or your own origin when django-oauth-toolkit runs in this project "
            "(docs/guides/oauth.md).",
            id=NO_AUTHORIZATION_SERVER_ID,
        )
    ]
