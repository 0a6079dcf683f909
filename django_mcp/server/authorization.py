"""Which scopes the declaration a request targets needs, and whether the caller has them.

Permissions (``permission_required``, ``permission=``) decide what a caller may *see*: a
declaration they deny is hidden and answers like an unknown one. Scopes decide what a
credential may *do*: a visible declaration whose ``scopes_required`` the caller's
credential lacks is answered at the HTTP level, 401 for a caller without credentials and
403 ``insufficient_scope`` for a token without the scopes (basic/authorization.mdx, "Scope
Challenge Handling"; ADR 0005). The lookup here is the same the handler does, so an
unknown and a hidden name cost the same work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django_mcp.protocol import methods

if TYPE_CHECKING:
    from django_mcp.protocol.admission import Admitted
    from django_mcp.server.context import Context
    from django_mcp.sites import MCPSite


def targeted(site: MCPSite, method: str, params: Mapping[str, Any], context: Context) -> Any:
    """The declaration a request acts on, if it is visible to the caller, else None."""
    if method == methods.TOOLS_CALL and isinstance(params.get("name"), str):
        return site.get_tool(params["name"], context)
    if method == methods.PROMPTS_GET and isinstance(params.get("name"), str):
        return site.get_prompt(params["name"], context)
    if method == methods.RESOURCES_READ and isinstance(params.get("uri"), str):
        found = site.find_resource(params["uri"], context)
        return None if found is None else found[0]
    if method == methods.COMPLETION_COMPLETE and isinstance(params.get("ref"), Mapping):
        ref = params["ref"]
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            return site.get_prompt(ref["name"], context)
        if ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
            templates = site.get_resource_templates(context)
            return next((t for t in templates if t.uri == ref["uri"]), None)
    return None


def missing_scopes(site: MCPSite, admitted: Admitted, context: Context) -> frozenset[str]:
    """Every scope the targeted declaration needs, when the caller lacks any of them (so
    one challenge names them all); empty when the caller may go on."""
    spec = targeted(site, admitted.request.method, admitted.request.params or {}, context)
    return context.caller.lacks(getattr(spec, "scopes_required", ()))


def declared_scopes(site: MCPSite) -> frozenset[str]:
    """Every scope some declaration of ``site`` requires (the default
    ``scopes_supported`` of its protected resource metadata)."""
    return frozenset(
        scope
        for table in site.registry.tables()
        for spec in table.values()
        for scope in getattr(spec, "scopes_required", ())
    )
