"""System checks of how a project is wired, each naming the fix (docs/checks.md).

``checks.py`` checks the ``DJANGO_MCP`` settings and the middleware; these look at what a
newcomer gets wrong next: no endpoint routed at all, a route that ``APPEND_SLASH`` breaks,
two served sites under one name, an admin site whose name breaks the explorer's links,
a 401 that points at metadata the URLconf does not serve, ``ModelTools`` without Django
REST framework, parameters without type hints, a return type whose schema cannot be
built, a site class whose lookups were replaced after it was defined, and a request-log
table that was never migrated.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.db import DatabaseError, connections, router
from django.urls import LocalePrefixPattern, Resolver404, URLPattern, URLResolver, get_resolver

from django_mcp.auth.metadata import configured_resource, metadata_path
from django_mcp.declarations.overrides import replaced_on_class
from django_mcp.models import RequestLog
from django_mcp.sites import all_sites
from django_mcp.sites import site as default_site

#: How to install Django REST framework, from a package index and from a checkout.
DRF_HINT = (
    "Install it: pip install 'django-mcp[drf]' (from a package index), "
    "pip install -e '.[drf]' (from a checkout of django-mcp), "
    "or pip install djangorestframework."
)


def endpoint_routes(
    patterns: list[URLPattern | URLResolver], prefix: str = "", *, localized: bool = True
) -> Iterator[tuple[str, Any]]:
    """``(route prefix, view)`` of every MCP endpoint in the URLconf; with ``localized``
    False, not those under ``i18n_patterns`` (whose prefix is the active language's)."""
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            if localized or not isinstance(pattern.pattern, LocalePrefixPattern):
                yield from endpoint_routes(pattern.url_patterns, route, localized=localized)
        elif getattr(pattern.callback, "mcp_server", None) is not None:
            yield prefix, pattern.callback


@register(Tags.urls)
def check_endpoint_routes(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.W010: ``path("mcp/", include(...))`` with ``APPEND_SLASH``.

    Clients POST to ``/mcp`` as they were given it; ``CommonMiddleware`` then redirects to
    ``/mcp/``, which a POST cannot follow (with ``DEBUG`` Django raises ``RuntimeError``).
    """
    if not getattr(settings, "APPEND_SLASH", True):
        return []
    messages: list[CheckMessage] = []
    for prefix, _view in endpoint_routes(get_resolver().url_patterns):
        if prefix.endswith("/"):
            bare = prefix.rstrip("/")
            messages.append(
                Warning(
                    f"The MCP endpoint is routed as {prefix!r}: with APPEND_SLASH, a POST to "
                    f"/{bare} is redirected, and MCP clients cannot follow it.",
                    hint=f'Route it without the slash: path("{bare}", include(...)) serves '
                    f"both /{bare} and /{bare}/ (docs/adr/0003-trailing-slash.md).",
                    id="django_mcp.W010",
                )
            )
    return messages


@register(Tags.urls)
def check_an_endpoint_is_routed(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.W016: the app is installed and no URL serves an MCP endpoint, so every
    client gets a 404 (the step of the install newcomers skip)."""
    if any(True for _ in endpoint_routes(get_resolver().url_patterns)):
        return []
    return [
        Warning(
            "No URL serves an MCP endpoint: MCP clients get 404 from this project.",
            hint='Route one in your root urls.py: path("mcp", include("django_mcp.urls")) '
            '(or a site\'s urls: path("mcp", site.urls)).',
            id="django_mcp.W016",
        )
    ]


@register(Tags.urls)
def check_site_names_are_unique(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.E014: two different sites the URLconf serves share a name. The name is
    what binds pagination cursors, request states, task rows and listen groups to a site,
    so such sites accept each other's cursors and states and see each other's tasks."""
    routes: dict[str, dict[Any, list[str]]] = {}
    for prefix, view in endpoint_routes(get_resolver().url_patterns):
        served = view.mcp_server.site
        routes.setdefault(served.name, {}).setdefault(served, []).append(f"/{prefix}")
    messages: list[CheckMessage] = []
    for name, sites in routes.items():
        if len(sites) > 1:
            where = "; ".join(", ".join(paths) for paths in sites.values())
            messages.append(
                Error(
                    f"{len(sites)} MCP sites are named {name!r} (served at {where}): they "
                    "accept each other's pagination cursors and share task rows and listen "
                    "groups.",
                    hint='Give each MCPSite its own name: MCPSite(name="internal").',
                    id="django_mcp.E014",
                )
            )
    return messages


def explorer_admin_sites(patterns: list[URLPattern | URLResolver]) -> Iterator[Any]:
    """Each ``AdminSite`` the URLconf serves the explorer under (its view carries the site
    as ``mcp_admin_site``, see ``django_mcp.explorer.admin``)."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from explorer_admin_sites(pattern.url_patterns)
        else:
            admin_site = getattr(pattern.callback, "mcp_admin_site", None)
            if admin_site is not None:
                yield admin_site


@register(Tags.urls, Tags.admin)
def check_explorer_admin_sites(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.E015: an admin site serving the explorer is named with a ":". The name
    is the admin URLs' instance namespace, and ``reverse()`` reads ":" as a separator, so
    the explorer's links (on the admin index and in the nav sidebar of every page) name
    no route. The admin leaves those links out rather than failing its pages (the checks
    do not run under a server started without manage.py), so this is the loud signal
    that they are missing. Any other name (empty, slashes, spaces) reverses whole."""
    seen: set[str] = set()
    messages: list[CheckMessage] = []
    for admin_site in explorer_admin_sites(get_resolver().url_patterns):
        name = admin_site.name
        if ":" in name and name not in seen:
            seen.add(name)
            messages.append(
                Error(
                    f"The admin site {name!r} serves the MCP explorer, but URL reversing "
                    "reads its name as namespaces: its pages cannot link the explorer or "
                    "the dashboard.",
                    hint="Name the AdminSite without ':': AdminSite(name=\"ops_v2\").",
                    id="django_mcp.E015",
                )
            )
    return messages


#: A route prefix made only of literal path characters (no converter, no regex).
_LITERAL_ROUTE = re.compile(r"[\w.~/-]*")


@register(Tags.urls)
def check_protected_resource_metadata(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.W015: the endpoint's 401 and 403 point clients at its protected resource
    metadata (RFC 9728), and the URLconf does not serve it, so no client can learn how to
    sign in. Left alone, as their paths cannot be known here: a route with converters or a
    regex, one under ``i18n_patterns``, and every route under ``FORCE_SCRIPT_NAME``. Any
    view at the path counts (a catch-all route cannot be told from the metadata)."""
    if getattr(settings, "FORCE_SCRIPT_NAME", None):
        return []
    resolver = get_resolver()
    configured = configured_resource()
    messages: list[CheckMessage] = []
    for prefix, view in endpoint_routes(resolver.url_patterns, localized=False):
        if not _LITERAL_ROUTE.fullmatch(prefix):
            continue
        endpoint = "/" + prefix.strip("/")
        # The challenge names the configured resource's path, else the endpoint's own.
        named = urlsplit(configured).path if configured else endpoint
        metadata = metadata_path(named)
        if _served(resolver, metadata):
            continue
        site = view.mcp_server.site
        for_site = "" if site.name == default_site.name else f", site=<the MCPSite {site.name!r}>"
        messages.append(
            Warning(
                f"The MCP endpoint {endpoint} points clients that must sign in at "
                f"{metadata}, which the URLconf does not serve: no MCP client can find out "
                "how to obtain a token.",
                hint="Add the protected resource metadata to your root urls.py: "
                f'urlpatterns += protected_resource_urls("{named.strip("/")}"{for_site}) '
                "(from django_mcp.http.auth import protected_resource_urls; "
                "docs/guides/authentication.md).",
                id="django_mcp.W015",
            )
        )
    return messages


def _served(resolver: URLResolver, path: str) -> bool:
    try:
        resolver.resolve(path)
    except Resolver404:
        return False
    return True


@register(Tags.models)
def check_unavailable_model_tools(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.E010: a ``ModelTools`` registration skipped for a missing package."""
    return [
        Error(f"{problem}; its tools are not served.", hint=DRF_HINT, id="django_mcp.E010")
        for target in all_sites()
        for problem in target.unavailable.values()
    ]


@register(Tags.compatibility)
def check_unhinted_parameters(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.W011: parameters without a type hint get an empty schema: the model is
    told nothing about them and any JSON value is accepted."""
    messages: list[CheckMessage] = []
    for target in all_sites():
        registry = target.registry
        for spec in [*registry.tools.values(), *registry.prompts.values()]:
            for name in spec.signature.unhinted:
                messages.append(
                    Warning(
                        f"{spec.origin}: parameter {name!r} has no type hint, so its schema "
                        "is empty and any value is accepted.",
                        hint=f"Annotate it, e.g. {name}: str, or {name}: int = 10.",
                        id="django_mcp.W011",
                    )
                )
    return messages


@register(Tags.compatibility)
def check_output_schemas(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.E013: a tool's return type whose schema still cannot be built once every
    ``mcp.py`` is imported (a forward reference nothing resolved). Registration lets an
    incomplete pydantic model through, since ``model_rebuild()`` may complete it later;
    left as it is, the first ``tools/list`` would fail with -32603 for the whole page."""
    messages: list[CheckMessage] = []
    for target in all_sites():
        for spec in target.registry.tools.values():
            try:
                spec.output_schema  # noqa: B018 - built (and kept) for tools/list
            except Exception as exc:
                messages.append(
                    Error(
                        f"{spec.origin}: the output schema of tool {spec.name!r} cannot be "
                        f"built: {type(exc).__name__}: {exc}".splitlines()[0],
                        hint="Define every class its return annotation names, and call "
                        "model_rebuild() on a model whose forward references are defined "
                        "later.",
                        id="django_mcp.E013",
                    )
                )
    return messages


@register(Tags.database)
def check_request_log_table(
    app_configs: Any, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """django_mcp.W012: the request-log table does not exist (``migrate`` was not run), so
    every record would be lost. Runs where a database is named (``check --database``,
    ``migrate``); a warning, not an error, because ``migrate`` itself runs it before it
    creates the table."""
    alias = router.db_for_write(RequestLog)
    if databases is None or alias not in databases:
        return []  # like Django's own database checks: only where a database is named
    try:
        tables = connections[alias].introspection.table_names()
    except DatabaseError:
        return []  # an unreachable database is reported by Django itself
    if RequestLog._meta.db_table in tables:
        return []
    return [
        Warning(
            f"The request-log table {RequestLog._meta.db_table!r} does not exist in the "
            f"{alias!r} database yet; MCP request records cannot be written until it does.",
            hint="Run: python manage.py migrate django_mcp",
            id="django_mcp.W012",
        )
    ]


@register(Tags.compatibility)
def check_lookups_replaced_on_classes(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    """django_mcp.W018: a site class whose lookup (or ``has_permission``,
    ``varies_by_caller``) was assigned after the class was defined. Whether a site decides
    per caller, and which kinds its own lookups serve, is read as the class is made (or as
    a site's own attribute is set): the new method runs, but its lists stay public, its
    lookups are asked without the caller, and the registry is still taken as what exists."""
    messages: list[CheckMessage] = []
    classes = {klass for target in all_sites() for klass in type(target).__mro__}
    for klass in sorted(classes, key=lambda k: f"{k.__module__}.{k.__qualname__}"):
        for name in replaced_on_class(klass):
            label = f"{klass.__module__}.{klass.__qualname__}"
            messages.append(
                Warning(
                    f"{label}.{name} was replaced after the class was defined, so its "
                    "sites do not know it may decide per caller.",
                    hint=f"Override {name} in a subclass of {klass.__qualname__}, or "
                    f"replace it on a site (site.{name} = ...).",
                    obj=klass,
                    id="django_mcp.W018",
                )
            )
    return messages
