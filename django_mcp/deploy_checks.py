"""Deployment checks (``manage.py check --deploy``): stable ids ``django_mcp.W001``..``W004``.

They warn about settings that are fine on a laptop and dangerous once the endpoint is
reachable from other machines (docs/security.md has the whole checklist):

* W001: ``SECRET_KEY`` is the demo project's public key, so anyone can forge pagination
  cursors (signed with it), read and forge ``requestState`` (sealed with a key derived from
  it), sessions and password-reset links.
* W002: ``DEBUG`` is on: MCP internal errors carry exception details, and Django's error
  pages show settings and tracebacks.
* W003: ``ALLOWED_HOSTS`` names a host other than loopback and a site the URLconf serves
  admits anonymous callers (it does not require authentication, the default): every tool
  no permission guards is open to whoever can reach the server. Public tools are a
  legitimate choice; silence the warning then.
* W004: ``ASGI_APPLICATION`` is Django's handler with neither ``BodyLimit`` nor
  ``NativeMCP`` in front of it, so a huge MCP body is read whole before
  ``MAX_REQUEST_BYTES`` can refuse it (docs/security.md). Only said when the chain of
  wrappers is one this check can follow to Django's handler: an unknown wrapper may bound
  bodies itself.

``subscriptions/listen`` needs no deployment check: streams always end (``LISTEN_MAX_SECONDS``
may not be None), are capped per process and per caller, and are refused under WSGI unless
``LISTEN_WSGI_STREAMS`` opts in, which check ``django_mcp.W013`` reports.
"""

from __future__ import annotations

from typing import Any, Final

from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register
from django.core.handlers.asgi import ASGIHandler
from django.urls import get_resolver
from django.utils.module_loading import import_string

from django_mcp.conf import SETTINGS_NAME
from django_mcp.setup_checks import endpoint_routes
from django_mcp.sites import MCPSite

#: Secret keys published with django-mcp (the demo project's); never valid in production.
PUBLIC_SECRET_KEYS: Final = frozenset({"django-mcp-demo-not-secret"})
LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


def is_loopback_only(allowed_hosts: list[str]) -> bool:
    """Whether ``ALLOWED_HOSTS`` admits loopback names only (an empty list is Django's
    loopback-only default under ``DEBUG``; ``"*"`` or any other name is not)."""
    return all(host.lower() in LOOPBACK_HOSTS for host in allowed_hosts)


def served_sites() -> list[MCPSite]:
    """The sites the URLconf routes to, read from it (and so imported, with any site it
    makes): a site no URL serves is open to nobody, and one made in ``urls.py`` exists
    only once the URLconf is imported, which ``check --deploy --tag security`` alone
    never does."""
    routes = endpoint_routes(get_resolver().url_patterns)
    return list(dict.fromkeys(view.mcp_server.site for _prefix, view in routes))


def anonymous_sites(sites: list[MCPSite]) -> list[str]:
    """The names of the sites that serve a caller who presents no credentials: those
    that do not require authentication (the default). With no authenticator in effect,
    every caller is such a caller; a site that requires authentication then refuses them
    all, which locks everyone out but opens nothing."""
    return sorted(site.name for site in sites if not site.requires_authentication)


#: Where ASGI wrappers keep what they wrap: ``BodyLimit``, Django's static files handler and
#: Channels' origin validators (``application``), most ASGI middleware (``app``), Channels'
#: ``BaseMiddleware`` such as ``AuthMiddlewareStack`` (``inner``).
WRAPPED: Final = ("application", "app", "inner")
#: How far :func:`reads_bodies_unbounded` follows wrappers before it gives up.
MAX_WRAPPERS: Final = 10


def reads_bodies_unbounded(application: Any) -> bool:
    """Whether ``application`` reaches Django's ``ASGIHandler`` with neither ``BodyLimit``
    nor ``NativeMCP`` on the way: through Channels' ``ProtocolTypeRouter`` (its ``"http"``
    entry) and wrappers that keep what they wrap (an application: something callable) as
    one of :data:`WRAPPED`, down to Django's handler or a subclass of it that wraps nothing
    (``ASGIStaticFilesHandler`` wraps, and is followed) and reads bodies as Django's does.
    False when the chain leaves what this can follow: an unknown wrapper may bound bodies
    itself."""
    from django_mcp.http.asgi import BodyLimit
    from django_mcp.http.native import NativeMCP

    for _ in range(MAX_WRAPPERS):
        if isinstance(application, BodyLimit | NativeMCP):
            return False
        wrapped = next(
            (found for name in WRAPPED if callable(found := getattr(application, name, None))),
            None,
        )
        if isinstance(application, ASGIHandler) and wrapped is None:
            # Unless a subclass reads bodies its own way (bounded, one hopes).
            return type(application).read_body is ASGIHandler.read_body
        mapping = getattr(application, "application_mapping", None)
        application = mapping.get("http") if isinstance(mapping, dict) else wrapped
        if application is None:
            return False
    return False


def asgi_application_unbounded() -> bool:
    """Whether ``ASGI_APPLICATION`` is set and reads MCP bodies unbounded (see
    :func:`reads_bodies_unbounded`); False when it cannot be imported (Django reports
    that where it is used)."""
    path = getattr(settings, "ASGI_APPLICATION", None)
    if not isinstance(path, str) or not path:
        return False
    try:
        application = import_string(path)
    except Exception:  # any error of the project's asgi.py is reported where it runs
        return False
    return reads_bodies_unbounded(application)


@register(Tags.security, deploy=True)
def check_deployment(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    if getattr(settings, "SECRET_KEY", None) in PUBLIC_SECRET_KEYS:
        messages.append(
            Warning(
                "SECRET_KEY is django-mcp's public demo key.",
                hint="Anyone can forge the signed pagination cursors of MCP requests, read and "
                "forge their sealed requestState, and forge sessions. Set a secret key of your "
                "own.",
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
    anonymous = anonymous_sites(served_sites())
    if anonymous and not is_loopback_only(list(settings.ALLOWED_HOSTS)):
        messages.append(
            Warning(
                "The MCP endpoint admits anonymous callers beyond loopback.",
                hint=f"ALLOWED_HOSTS names non-loopback hosts, and the MCP site(s) "
                f"{', '.join(repr(name) for name in anonymous)} admit callers who present no "
                "credentials: anyone who reaches the server may call every tool that no "
                f"permission guards. Set {SETTINGS_NAME}['REQUIRE_AUTHENTICATION'] = True "
                "(or MCPSite(require_authentication=True)) with an authenticator, or silence "
                "django_mcp.W003 if those tools are meant to be public (docs/security.md).",
                id="django_mcp.W003",
            )
        )
    if asgi_application_unbounded():
        messages.append(
            Warning(
                f"ASGI_APPLICATION ({settings.ASGI_APPLICATION}) reads MCP request bodies "
                "whole before MAX_REQUEST_BYTES can refuse them.",
                hint="Django's ASGI handler reads a whole body before any middleware runs. "
                "Wrap it in asgi.py: application = BodyLimit(get_asgi_application()), "
                "from django_mcp.http.asgi (or serve MCP with NativeMCP); docs/deployment.md.",
                id="django_mcp.W004",
            )
        )
    return messages
