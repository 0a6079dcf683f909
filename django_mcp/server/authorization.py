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

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from django_mcp.protocol import errors, methods
from django_mcp.protocol import tasks as tasks_proto
from django_mcp.sites import MCPSite
from django_mcp.tasks import store
from django_mcp.tasks.models import MCPTask

if TYPE_CHECKING:
    from django_mcp.auth.caller import Caller
    from django_mcp.protocol.admission import Admitted
    from django_mcp.server.context import Context


#: The Tasks extension's requests about one task: they act with its tool's authority.
TASK_METHODS: Final = frozenset(
    {tasks_proto.TASKS_GET, tasks_proto.TASKS_UPDATE, tasks_proto.TASKS_CANCEL}
)


def gated(site: MCPSite, spec: Any) -> bool:
    """Whether seeing ``spec`` (None: an unknown name) depends on the caller: it has a
    permission check, or ``site`` decides in code of its own (``has_permission`` or a
    lookup, :attr:`~django_mcp.sites.MCPSite.decides_per_caller`). Looking up an ungated
    declaration needs no :class:`Context`, so none is built."""
    return getattr(spec, "permission", None) is not None or site.decides_per_caller


def targeted(
    site: MCPSite, method: str, params: Mapping[str, Any], context: Callable[[], Context]
) -> Any:
    """The declaration a request acts on, if it is visible to the caller, else None.

    ``context`` gives the request's :class:`Context`; it is asked for only when a
    permission check needs the caller (:func:`gated`).
    """
    if method == methods.TOOLS_CALL and isinstance(params.get("name"), str):
        spec = site.registry.tools.get(params["name"])
        return site.get_tool(params["name"], context() if gated(site, spec) else None)
    if method == methods.PROMPTS_GET and isinstance(params.get("name"), str):
        prompt = site.registry.prompts.get(params["name"])
        return site.get_prompt(params["name"], context() if gated(site, prompt) else None)
    if method == methods.RESOURCES_READ and isinstance(params.get("uri"), str):
        found = site.find_resource(params["uri"], _if_varying(site, context))
        return None if found is None else found[0]
    if method in TASK_METHODS and isinstance(params.get("taskId"), str):
        return _task_tool(site, params["taskId"], context())
    if method == methods.COMPLETION_COMPLETE and isinstance(params.get("ref"), Mapping):
        ref = params["ref"]
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            return site.get_prompt(ref["name"], _if_varying(site, context))
        if ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
            templates = site.get_resource_templates(_if_varying(site, context))
            return next((t for t in templates if t.uri == ref["uri"]), None)
    return None


def _task_tool(site: MCPSite, task_id: str, context: Context) -> Any:
    """The tool of the caller's own task ``task_id``, if the caller may still see it: a
    task acts with its tool's authority, so reading, answering or cancelling it needs what
    calling the tool needs (ext-tasks ``tasks.md``, "Security Considerations"). None for a
    request that did not declare the extension, or an id that is not the caller's: the
    handler answers those (-32021, -32602) and learns nothing more here."""
    if not tasks_proto.declares(context.meta) or not store.could_be_task_id(task_id):
        return None
    owned = MCPTask.objects.filter(pk=task_id, owner=context.principal, site=site.name)
    tool = owned.values_list("tool", flat=True).first()
    return None if tool is None else site.get_tool(tool, context)


def _if_varying(site: MCPSite, context: Callable[[], Context]) -> Context | None:
    """The Context when some declaration of ``site`` is gated, else None (none built)."""
    return context() if site.varies_by_caller() else None


def missing_scopes(
    site: MCPSite, admitted: Admitted, context: Callable[[], Context]
) -> frozenset[str]:
    """Every scope the targeted declaration needs, when the caller lacks any of them (so
    one challenge names them all); empty when the caller may go on.

    ``context`` gives the request's :class:`Context`, asked for only when a permission
    check or a required scope needs the caller: a call of an ungated tool without
    ``scopes_required`` builds none.
    """
    params = admitted.request.params or {}
    method = admitted.request.method
    if method == methods.TOOLS_CALL and not _tool_needs_scopes(site, params):
        return frozenset()  # the one declaration the call can target needs none
    if method in TASK_METHODS and not task_scopes_checked(site, method):
        return frozenset()  # no tool of the site needs a scope: no task lookup
    spec = targeted(site, method, params, context)
    required = getattr(spec, "scopes_required", ())
    if not required:
        return frozenset()
    return context().caller.lacks(required)


def scopes_description(scopes: Iterable[str]) -> str:
    """What a 403 says, in its body and its challenge: every scope the operation needs."""
    return f"This operation needs the scopes: {' '.join(sorted(scopes))}"


def refusal(
    site: MCPSite, admitted: Admitted, context: Callable[[], Context]
) -> errors.InvalidRequest | None:
    """What a transport without HTTP statuses (stdio, ``mcp_call``) answers where HTTP
    answers 401 or 403: the JSON-RPC error of that response's body, so the same request
    has the same outcome on every transport (docs/adr/0002-validate-once.md). A caller
    without credentials on a site that requires authentication, or one that lacks a
    scope the target requires (ADR 0005); None to go on. ``context`` is built at most
    once, and only when a check needs the caller."""
    built = functools.cache(context)
    if site.requires_authentication and not built().caller.has_credentials:
        return errors.Unauthenticated()
    missing = missing_scopes(site, admitted, built)
    return scope_refusal(built().caller, missing) if missing else None


def scope_refusal(
    caller: Caller, missing: Iterable[str]
) -> errors.Unauthenticated | errors.InsufficientScope:
    """The error of a request whose target needs the scopes ``missing``: a caller without
    credentials must sign in (401), one whose credential lacks them is refused (403
    ``insufficient_scope``, naming every scope needed)."""
    if not caller.has_credentials:
        return errors.Unauthenticated()
    return errors.InsufficientScope(scopes_description(missing))


def task_scopes_checked(site: MCPSite, method: str) -> bool:
    """Whether a ``method`` request must have its task's tool scopes checked, which reads
    the task row: a ``tasks/get|update|cancel`` on a site some of whose tools need
    scopes, or whose own tool lookups may serve one the registry does not hold."""
    if method not in TASK_METHODS:
        return False
    return "tools" in site.own_lookups or bool(declared_scopes(site))


def _tool_needs_scopes(site: MCPSite, params: Mapping[str, Any]) -> bool:
    """Whether the tool a ``tools/call`` names requires any scope, visible to the caller
    or not: when it requires none (or does not exist) no caller lacks a scope for it,
    and finding out whether the caller may see it is not needed. A site's own tool
    lookup may serve a tool the registry does not hold (or another than it holds): only
    the lookup can say, so its tools are always looked up."""
    if "tools" in site.own_lookups:
        return True
    name = params.get("name")
    spec = site.registry.tools.get(name) if isinstance(name, str) else None
    return bool(getattr(spec, "scopes_required", ()))


def declared_scopes(site: MCPSite) -> frozenset[str]:
    """Every scope some registered declaration of ``site`` requires (the default
    ``scopes_supported`` of its protected resource metadata, and the ``scope`` of a 401's
    challenge). The registry, not the lookups: this is asked with no caller, and a
    declaration a site's own lookup builds per caller is unknown until one asks; such a
    site names its scopes in the ``SCOPES_SUPPORTED`` setting."""
    return frozenset(
        scope
        for table in site.registry.tables()
        for spec in table.values()
        for scope in getattr(spec, "scopes_required", ())
    )
