"""Validators of the authentication settings, merged into ``checks.VALIDATORS`` (E004), and
check E016: an ``AUTHENTICATORS`` entry that is no authenticator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final
from urllib.parse import urlsplit

from django.core.checks import CheckMessage, Error
from django.db import DatabaseError
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
    """``django_mcp.E016`` for each ``AUTHENTICATORS`` entry that cannot be imported, is
    no authenticator (a DRF class, which belongs in ``DRF_AUTHENTICATION_CLASSES``), or
    cannot be built with no arguments, as the resolver builds each one.

    The list is read on the first MCP request, not at start-up: without the check such an
    entry failed every MCP request with a 500 and nothing said why beforehand. An
    authenticator need not subclass ``Authenticator``; it must have what the resolver
    calls."""
    paths = mcp_settings.AUTHENTICATORS
    if not _strings(paths):
        return []  # E004 reports the malformed setting
    messages: list[CheckMessage] = []
    for path in paths:
        found, problem = _imported(path)
        if problem is None:
            if isinstance(found, type) and issubclass(found, DRFAuthenticator):
                messages.extend(_drf_classes_unimported())
            problem = _not_an_authenticator(found)
        if problem is None:
            continue
        messages.append(
            Error(
                f"DJANGO_MCP['AUTHENTICATORS'] entry {path!r} {problem}.",
                hint="Name subclasses of django_mcp.auth.base.Authenticator, built with no "
                "arguments; DRF authentication classes go in DRF_AUTHENTICATION_CLASSES, run "
                "by django_mcp.auth.drf.DRFAuthenticator.",
                id=AUTHENTICATOR_CHECK_ID,
            )
        )
    return messages


def _imported(path: str) -> tuple[Any, str | None]:
    """``(what path names, None)``, or ``(None, why it cannot be imported)``: any error,
    not only ImportError (a module failing as it loads, ImproperlyConfigured), since a
    check reports and never raises."""
    try:
        return import_string(path), None
    except Exception as exc:
        return None, f"cannot be imported ({exc})"


def _not_an_authenticator(found: Any) -> str | None:
    """Why ``found`` cannot serve as the resolver uses an entry (``found()``, then the
    attributes of :data:`AUTHENTICATOR_ATTRIBUTES`), or None when it can."""
    missing = [name for name in AUTHENTICATOR_ATTRIBUTES if not hasattr(found, name)]
    if missing:
        return f"is not an authenticator (it has no {', '.join(missing)})"
    try:
        found()
    except DatabaseError:  # checks run before migrate (which they would block) or offline
        return None
    except Exception as exc:
        return f"cannot be built with no arguments ({type(exc).__name__}: {exc})"
    return None


def _drf_classes_unimported() -> list[CheckMessage]:
    """E016 for each ``DRF_AUTHENTICATION_CLASSES`` path that cannot be imported: they are
    read on every request with an ``Authorization`` header and by every 401's challenge,
    each a 500 otherwise. None (DRF's own setting) is DRF's to check, once DRF is there."""
    configured = mcp_settings.DRF_AUTHENTICATION_CLASSES
    if configured is None:
        _, problem = _imported("rest_framework.settings.api_settings")
        if problem is None:
            return []
        return [
            Error(
                f"DRFAuthenticator is in DJANGO_MCP['AUTHENTICATORS'] but Django REST "
                f"framework {problem}.",
                hint="Install djangorestframework, or remove DRFAuthenticator.",
                id=AUTHENTICATOR_CHECK_ID,
            )
        ]
    if not _strings(configured):
        return []
    return [
        Error(
            f"DJANGO_MCP['DRF_AUTHENTICATION_CLASSES'] entry {path!r} {problem}.",
            hint="Name Django REST framework authentication classes.",
            id=AUTHENTICATOR_CHECK_ID,
        )
        for path in configured
        if (problem := _imported(path)[1]) is not None
    ]
