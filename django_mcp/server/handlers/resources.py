"""``resources/list``, ``resources/templates/list`` and ``resources/read`` (server/resources.mdx).

Not found is -32602 with ``data.uri`` and never an empty ``contents`` (SEP-2164). Django's
``ObjectDoesNotExist`` and ``Http404`` raised by a resource function mean not found too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404
from pydantic import ValidationError

from django_mcp.conf import mcp_settings
from django_mcp.protocol import methods
from django_mcp.protocol.errors import ResourceNotFound
from django_mcp.server.authorization import gated
from django_mcp.server.listing import listing

if TYPE_CHECKING:
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer


def list_resources(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    specs = server.site.get_resources(context)
    return listing(server, params, context, methods.RESOURCES_LIST, "resources", specs)


def list_templates(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    specs = server.site.get_resource_templates(context)
    return listing(
        server, params, context, methods.RESOURCES_TEMPLATES_LIST, "resourceTemplates", specs
    )


def read_resource(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    uri: str = params["uri"]
    found = server.site.find_resource(uri, context)
    if found is None:
        raise ResourceNotFound(uri)
    spec, variables = found
    try:
        contents = spec.read(uri, variables, context)
    except ResourceNotFound as exc:
        raise ResourceNotFound(uri) from exc  # always name the URI that was asked for
    except (ObjectDoesNotExist, Http404, ValidationError) as exc:
        raise ResourceNotFound(uri) from exc
    if not contents:
        raise ResourceNotFound(uri)
    ttl = spec.ttl_ms if spec.ttl_ms is not None else int(mcp_settings.RESOURCE_TTL_MS)
    return {
        "contents": contents,
        "ttlMs": int(ttl),
        "cacheScope": read_scope(server, spec),
    }


def read_scope(server: MCPServer, spec: Any) -> Literal["public", "private"]:
    """The declared scope, else the site's; never public for a resource whose readers
    differ by caller, which a shared cache would otherwise serve to callers who may not
    read it (server/utilities/caching.mdx: ``public`` has no per-user data): one gated by
    a permission (its own, or the site's own code: ``decides_per_caller``), by scopes, or by a
    ``visible`` or ``row_visible`` check (a ``ModelTools`` row scoped by ``get_queryset``)."""
    if (
        gated(server.site, spec)
        or spec.scopes_required
        or getattr(spec, "visible", None) is not None
        or getattr(spec, "row_visible", None) is not None
    ):
        return "private"
    scope: Literal["public", "private"] = spec.cache_scope or server.cache_scope()
    return scope
