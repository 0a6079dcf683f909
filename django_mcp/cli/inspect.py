"""``manage.py mcp_inspect``: every declaration of every site, as the wire lists it, with
who may use it.

Each entry is the definition a client would list (schemas and annotations included) plus
``access``: the Django permissions it requires, whether a custom check gates it, and the
OAuth scopes it needs (when the declaration carries any). Nothing is filtered by caller:
this is the operator's view, not a client's.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any, TypeGuard

from django.core import checks

from django_mcp.declarations.permissions import PERMISSION_SOURCE

if TYPE_CHECKING:
    from django_mcp.sites import MCPSite


def access(spec: Any) -> dict[str, Any]:
    """Who may use ``spec``: ``public``, or its permissions, custom check and scopes."""
    check = getattr(spec, "permission", None)
    scopes = sorted(getattr(spec, "scopes_required", None) or [])
    info: dict[str, Any] = {"public": True}  # first in the JSON, settled last
    custom = check
    # ``permission_required=`` and ``permission=`` arrive combined into one check that
    # remembers both (see declarations/permissions.py); a bare check is a custom one.
    source = getattr(check, PERMISSION_SOURCE, None)
    if source is not None:
        perms, custom = source
        info["permission_required"] = list(perms)
        info["custom_check"] = None
    if _is_model_action_check(custom):
        tools, action = custom.args  # a ModelTools action or rows: its options decide
        for key in ("permission_required", "custom_check"):  # no more than the tool shows
            if not info.get(key):
                info.pop(key, None)
        info.update(tools.guards(action))
    elif custom is not None:
        info["custom_check"] = _name(custom)
    if scopes:
        info["scopes"] = scopes
    guarded = ("permission_required", "permission_classes", "custom_check", "scopes")
    info["public"] = not any(info.get(key) for key in guarded)
    return info


def _is_model_action_check(check: Any) -> TypeGuard[functools.partial[Any]]:
    """``functools.partial(permission_check, tools, action)``, as ModelTools builds it for
    each action's tool and for its rows' resource template."""
    return (
        isinstance(check, functools.partial)
        and len(check.args) == 2
        and callable(getattr(check.args[0], "guards", None))
    )


def definition(spec: Any) -> dict[str, Any]:
    """The wire definition of ``spec`` (a method on some specs, a cached property on
    others)."""
    value = spec.definition
    result: dict[str, Any] = dict(value() if callable(value) else value)
    return result


def _name(func: Any) -> str:
    """``module.qualname``; for a ``functools.partial``, its function's, marked so."""
    if isinstance(func, functools.partial):
        return f"{_name(func.func)} (partial)"
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"


def describe_site(site: MCPSite) -> dict[str, Any]:
    """The report of one site: its registry, unfiltered by caller (a declaration a lookup
    of the site's own builds per caller exists only for a caller, so is not in it)."""
    registry = site.registry

    def entries(table: dict[str, Any]) -> list[dict[str, Any]]:
        return [{**definition(spec), "access": access(spec)} for _, spec in sorted(table.items())]

    models = []
    for model, tools in sorted(registry.models.items(), key=lambda item: item[0]._meta.label):
        models.append(
            {
                "model": model._meta.label,
                "options": type(tools).__qualname__,
                "tools": sorted(spec.name for spec in tools.get_tools()),
                "permissions": {
                    action: list(tools.permissions_for(action))
                    for action in getattr(tools, "actions", [])
                },
            }
        )
    return {
        "site": site.name,
        "tools": entries(registry.tools),
        "resources": entries(registry.resources),
        "resource_templates": entries(registry.templates),
        "prompts": entries(registry.prompts),
        "model_tools": models,
    }


def check_errors() -> list[checks.CheckMessage]:
    """The system checks' messages of level ERROR and above (every app, every tag)."""
    return [m for m in checks.run_checks(include_deployment_checks=False) if m.is_serious()]


def as_json(report: list[dict[str, Any]]) -> str:
    return json.dumps(report, indent=2, sort_keys=False, default=str)


def as_table(report: list[dict[str, Any]]) -> str:
    """A readable summary: one line per declaration, schemas left to ``--format json``."""
    lines: list[str] = []
    for site_report in report:
        lines.append(f"Site {site_report['site']!r}")
        for section, key in (
            ("tools", "name"),
            ("resources", "uri"),
            ("resource_templates", "uriTemplate"),
            ("prompts", "name"),
        ):
            lines.append(f"  {section} ({len(site_report[section])})")
            for entry in site_report[section]:
                lines.append(f"    {entry[key]:<32} {_access_text(entry['access'])}")
                hints = entry.get("annotations")
                if hints:
                    lines.append(f"      annotations: {json.dumps(hints, sort_keys=True)}")
                arguments = sorted((entry.get("inputSchema") or {}).get("properties", {}))
                if arguments:
                    lines.append(f"      arguments: {', '.join(arguments)}")
        lines.append(f"  model_tools ({len(site_report['model_tools'])})")
        for model in site_report["model_tools"]:
            lines.append(f"    {model['model']:<32} {', '.join(model['tools'])}")
    return "\n".join(lines)


def _access_text(info: dict[str, Any]) -> str:
    if info["public"]:
        return "public"
    parts = []
    if info.get("permission_required"):
        parts.append("perms=" + ",".join(info["permission_required"]))
    if info.get("permission_classes"):
        parts.append("classes=" + ",".join(info["permission_classes"]))
    if info.get("custom_check"):
        parts.append(f"check={info['custom_check']}")
    if info.get("scopes"):
        parts.append("scopes=" + ",".join(info["scopes"]))
    return " ".join(parts)
