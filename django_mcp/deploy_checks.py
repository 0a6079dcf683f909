"""Deployment checks (``manage.py check --deploy``): stable ids ``django_mcp.W001``..``W003``.

They warn about settings that are fine on a laptop and dangerous once the endpoint is
reachable from other machines (docs/security.md has the whole checklist):

* W001: ``SECRET_KEY`` is the demo project's public key, so anyone can forge pagination
  cursors and ``requestState`` (both signed with it), sessions and password-reset links.
* W002: ``DEBUG`` is on: MCP internal errors carry exception details, and Django's error
  pages show settings and tracebacks.
* W003: ``ALLOWED_HOSTS`` names a host other than loopback and no MCP authenticator is
  configured: every tool is open to whoever can reach the server.

``subscriptions/listen`` needs no deployment check: streams always end (``LISTEN_MAX_SECONDS``
may not be None), are capped per process and per caller, and are refused under WSGI unless
``LISTEN_WSGI_STREAMS`` opts in, which check ``django_mcp.W013`` reports.
"""

from __future__ import annotations

from typing import Any, Final

from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register

from django_mcp.conf import SETTINGS_NAME

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
    return messages
