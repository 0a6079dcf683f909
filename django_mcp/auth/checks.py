"""Validators of the authentication settings, merged into ``checks.VALIDATORS`` (E004), and
check E016: an ``AUTHENTICATORS`` entry that is no authenticator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

from django.core.checks import CheckMessage, Error
from django.utils.module_loading import import_string

from django_mcp.auth.drf import DRFAuthenticator
from django_mcp.conf import mcp_settings

AUTHENTICATOR_CHECK_ID: Final = "django_mcp.E016"


def _strings(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value)


def _absolute_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in {"http", "https"} and bool(parts.netloc) and not parts.fragment


def _scopes(value: Any) -> bool:
    return value is None or (_strings(value) and not any(" " in v for v in value))


def _scope_hierarchy(value: Any) -> bool:
    return isinstance(value, dict) and all(
        _scopes([broader]) and isinstance(narrower, (list, tuple)) and _scopes(narrower)
        for broader, narrower in value.items()
    )


AUTH_VALIDATORS: Final[dict[str, tuple[Callable[[Any], bool], str]]] = {
    "AUTHENTICATORS": (_strings, "Use a list of dotted paths of Authenticator classes."),
    "REQUIRE_AUTHENTICATION": (lambda v: isinstance(v, bool), "Use True or False."),
    "DRF_AUTHENTICATION_CLASSES": (
        lambda v: v is None or _strings(v),
        "Use None (DRF's DEFAULT_AUTHENTICATION_CLASSES) or a list of dotted paths.",
    ),
    "TOKEN_LAST_USED_INTERVAL": (
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0,
        "Use a number of seconds, 0 or more.",
    ),
    "RESOURCE": (
        lambda v: v is None or _absolute_url(v),
        "Use None or an absolute http(s) URL without a fragment, e.g. https://example.com/mcp.",
    ),
    "RESOURCE_NAME": (lambda v: v is None or isinstance(v, str), "Use None or a string."),
    "AUTHORIZATION_SERVERS": (
        lambda v: isinstance(v, (list, tuple)) and all(_absolute_url(s) for s in v),
        "Use a list of issuer URLs such as 'https://auth.example.com'.",
    ),
    "SCOPES_SUPPORTED": (_scopes, "Use None or a list of scopes without spaces."),
    "SCOPE_HIERARCHY": (
        _scope_hierarchy,
        "Use a dict from a scope to the list of narrower scopes it implies, such as "
        "{'books:admin': ['books:write']}; scopes without spaces.",
    ),
}


#: What :mod:`.resolve` uses of each ``AUTHENTICATORS`` entry (``challenge``: every 401's).
AUTHENTICATOR_ATTRIBUTES: Final = (
    "accepts_bearer_tokens",
    "has_credentials",
    "authenticate",
    "challenge",
)


def check_authenticator_classes() -> list[CheckMessage]:
    """``django_mcp.E016`` for each ``AUTHENTICATORS`` entry that cannot be imported or is
    no authenticator (a DRF class, which belongs in ``DRF_AUTHENTICATION_CLASSES``).

    The list is read on the first MCP request, not at start-up: without the check such an
    entry failed every MCP request with a 500 and nothing said why beforehand. An
    authenticator need not subclass ``Authenticator``; it must have what the resolver
    calls."""
    paths = mcp_settings.AUTHENTICATORS
    if not _strings(paths):
        return []  # E004 reports the malformed setting
    messages: list[CheckMessage] = []
    for path in paths:
        try:
            found = import_string(path)
        except Exception as exc:  # not only ImportError: a check reports, never raises
            problem = f"cannot be imported ({exc})"
        else:
            if isinstance(found, type) and issubclass(found, DRFAuthenticator):
                messages.extend(_drf_classes_unimported())
            missing = [name for name in AUTHENTICATOR_ATTRIBUTES if not hasattr(found, name)]
            if not missing:
                continue
            problem = f"is not an authenticator (it has no {', '.join(missing)})"
        messages.append(
            Error(
                f"DJANGO_MCP['AUTHENTICATORS'] entry {path!r} {problem}.",
                hint="Name subclasses of django_mcp.auth.base.Authenticator; DRF "
                "authentication classes go in DRF_AUTHENTICATION_CLASSES, run by "
                "django_mcp.auth.drf.DRFAuthenticator.",
                id=AUTHENTICATOR_CHECK_ID,
            )
        )
    return messages


def _drf_classes_unimported() -> list[CheckMessage]:
    """E016 for each ``DRF_AUTHENTICATION_CLASSES`` path that cannot be imported: they are
    read on every request with an ``Authorization`` header and by every 401's challenge,
    each a 500 otherwise. None (DRF's own setting) is DRF's to check, once DRF is there."""
    configured = mcp_settings.DRF_AUTHENTICATION_CLASSES
    if configured is None:
        try:
            import_string("rest_framework.settings.api_settings")
        except Exception as exc:  # DRF not installed: nothing checks DRF's own setting
            return [
                Error(
                    f"DRFAuthenticator is in DJANGO_MCP['AUTHENTICATORS'] but Django REST "
                    f"framework cannot be imported ({exc}).",
                    hint="Install djangorestframework, or remove DRFAuthenticator.",
                    id=AUTHENTICATOR_CHECK_ID,
                )
            ]
    if not _strings(configured):
        return []
    messages: list[CheckMessage] = []
    for path in configured:
        try:
            import_string(path)
        except Exception as exc:  # ImproperlyConfigured, say: reported, never raised
            messages.append(
                Error(
                    f"DJANGO_MCP['DRF_AUTHENTICATION_CLASSES'] entry {path!r} cannot be "
                    f"imported ({exc}).",
                    hint="Name Django REST framework authentication classes.",
                    id=AUTHENTICATOR_CHECK_ID,
                )
            )
    return messages
