"""What the explorer shows of one site: every declaration, its schema and who may use it,
and the URL of the site's endpoint (which the page's script POSTs to)."""

from __future__ import annotations

import json
from typing import Any

from django.urls import NoReverseMatch, Resolver404, resolve, reverse

from django_mcp.cli.inspect import access, definition
from django_mcp.protocol import jsonrpc
from django_mcp.sites import MCPSite, all_sites, site


def sites() -> list[MCPSite]:
    """Every live site, the default one first, each once."""
    default = site.name
    found = {item.name: item for item in all_sites()}
    return sorted(found.values(), key=lambda item: (item.name != default, item.name))


def find(name: str) -> MCPSite | None:
    return next((item for item in sites() if item.name == name), None)


def endpoint_path(target: MCPSite) -> str | None:
    """The path the site is served at, or None when no URL routes to it.

    ``include("django_mcp.urls")`` and ``site.urls`` both name the pattern
    ``django_mcp:endpoint`` (the instance namespace is the site's name); the reversed path
    is resolved back to check it really serves *this* site, since Django falls back to
    another instance of the namespace when the site's own is missing.
    """
    try:
        path = reverse("django_mcp:endpoint", current_app=target.name)
        match = resolve(path)
    except (NoReverseMatch, Resolver404):
        return None
    server = getattr(match.func, "mcp_server", None)
    return path if server is not None and server.site is target else None


def entries(target: MCPSite) -> dict[str, list[dict[str, Any]]]:
    """The operator's view of the site, unfiltered by caller (as ``manage.py mcp_inspect``
    reports it): each declaration's wire definition, as JSON for the page's script, and who
    may use it. The registry, not the site's lookups: with no caller to ask for, one a
    lookup of the site's own builds per caller is not shown (the tools guide says so)."""
    registry = target.registry
    tables: dict[str, dict[Any, Any]] = {
        "tools": registry.tools,
        "resources": registry.resources,
        "resource_templates": registry.templates,
        "prompts": registry.prompts,
    }
    report: dict[str, list[dict[str, Any]]] = {}
    for section, table in tables.items():
        report[section] = []
        for _, spec in sorted(table.items()):
            wire = served(definition(spec))
            info = access(spec)
            scopes = sorted(getattr(spec, "scopes_required", None) or [])
            if scopes:
                info["scopes"] = scopes
                info["public"] = False
            report[section].append(
                {
                    **wire,
                    "wire_json": json.dumps(wire, indent=2, allow_nan=False),
                    "access_items": access_items(info),
                }
            )
    return report


def served(wire: dict[str, Any]) -> dict[str, Any]:
    """``wire`` as a client reads it from the endpoint: encoded by ``jsonrpc.dumps``, as
    ``tools/list`` and the other lists are, so a non-finite float (``math.inf`` as a
    default) is ``null`` there and here, never ``Infinity``, which the page's
    ``JSON.parse`` refuses. A value JSON has no form for (the endpoint cannot list it
    either) is shown as its ``str``, so the page still renders."""
    try:
        text = jsonrpc.dumps(wire)
    except TypeError:
        text = jsonrpc.dumps(json.loads(json.dumps(wire, default=str)))
    result: dict[str, Any] = json.loads(text)
    return result


def access_items(info: dict[str, Any]) -> list[str]:
    """Who may use a declaration, as short phrases for the page."""
    if info.get("public"):
        return ["anyone who may use the endpoint"]
    items = [f"permission {perm}" for perm in info.get("permission_required") or []]
    items.extend(f"permission class {name}" for name in info.get("permission_classes") or [])
    if info.get("custom_check"):
        items.append(f"custom check {info['custom_check']}")
    items.extend(f"scope {scope}" for scope in info.get("scopes") or [])
    return items
