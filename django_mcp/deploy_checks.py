"""Deployment checks (``manage.py check --deploy``): stable ids ``django_mcp.W001``..``W004``.

They warn about settings that are fine on a laptop and dangerous once the endpoint is
reachable from other machines (docs/security.md has the whole checklist):

* W001: ``SECRET_KEY`` is the demo project's public key, so anyone can forge pagination
  cursors and ``requestState`` (both signed with it), sessions and password-reset links.
* W002: ``DEBUG`` is on: MCP internal errors carry exception details, and Django's error
  pages show settings and tracebacks.
* W003: ``ALLOWED_HOSTS`` names a host other than loopback and no MCP authenticator is
  configured: every tool is open to whoever can reach the server.
* W004: the project is served over WSGI (no ``ASGI_APPLICATION``) and listen streams are
  not bounded: each open ``subscriptions/listen`` stream holds a worker thread for ever.
"""

from __future__ import annotations

from typing import Any, Final

from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register

from django_mcp.conf import SETTINGS_NAME, mcp_settings

#: Secret keys published with django-mcp (the demo project's); never valid in production.
PUBLIC_SECRET_KEYS: Final = frozenset({"django-mcp-demo-not-secret"})
LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


def is_loopback_only(allowed_hosts: list[str]) -> bool:
    """Whether ``ALLOWED_HOSTS`` admits loopback names only (an empty list is Django's
    loopback-only default under ``DEBUG``; ``"*"`` or any other name is not)."""
    return all(host.lower() in LOOPBACK_HOSTS for host in allowed_hosts)


def authenticators() -> list[Any]:
    """``DJANGO_MCP["AUTHENTICATORS"]``, read raw: empty when none are configured."""
    configured = getattr(settings, SETTINGS_NAME, {})
    if not isinstance(configured, dict):
        return []
    return list(configured.get("AUTHENTICATORS") or [])


def listen_is_bounded() -> bool:
    """Whether every ``subscriptions/listen`` stream ends by itself: the one place that
    decides it, so each new cap on listen streams is added here."""
    return mcp_settings.LISTEN_MAX_SECONDS is not None


def served_over_wsgi() -> bool:
    """Whether the project looks WSGI-served: it names no ``ASGI_APPLICATION``."""
    return not getattr(settings, "ASGI_APPLICATION", None)


@register(Tags.security, deploy=True)
def check_deployment(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    if getattr(settings, "SECRET_KEY", None) in PUBLIC_SECRET_KEYS:
        messages.append(
            Warning(
                "SECRET_KEY is django-mcp's public demo key.",
                hint="Anyone can forge the signed pagination cursors and requestState of MCP "
                "requests, and sessions. Set a secret key of your own.",
                id="django_mcp.W001",
            )
        )
    if settings.DEBUG:
        messages.append(
            Warning(
                "DEBUG is on while serving MCP.",
                hint="MCP internal errors then carry exception details to every client. "
                "Set DEBUG = False in deployment.",
                id="django_mcp.W002",
            )
        )
    if not is_loopback_only(list(settings.ALLOWED_HOSTS)) and not authenticators():
        messages.append(
            Warning(
                "The MCP endpoint is served beyond loopback with no authenticator.",
                hint=f"ALLOWED_HOSTS names non-loopback hosts, and {SETTINGS_NAME}"
                "['AUTHENTICATORS'] is empty: anyone who reaches the server may call every "
                "tool. Configure authentication (docs/security.md).",
                id="django_mcp.W003",
            )
        )
    if served_over_wsgi() and not listen_is_bounded():
        messages.append(
            Warning(
                "subscriptions/listen streams are unbounded under WSGI.",
                hint="Each open listen stream holds a worker thread until the client leaves. "
                f"Set {SETTINGS_NAME}['LISTEN_MAX_SECONDS'], or serve with ASGI.",
                id="django_mcp.W004",
            )
        )
    return messages
