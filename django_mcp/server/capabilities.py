"""The server capabilities a site advertises in ``server/discover`` (server/discover.mdx).

They follow from what is registered (tools, resources, prompts, completers) and from the
deployment: ``listChanged`` and resource subscriptions are offered only when a channel
layer can carry change notifications, and the server that answers can hold a listen
stream. Derived once per registry state, because admission
asks on every request.

Derived with no caller, so a site's own lookups (``get_tools`` and the like, which may
serve declarations built per caller, not registered) cannot be asked what they serve: a
kind of declaration a lookup of the site's own serves is offered whatever the registry
holds (:attr:`~django_mcp.sites.MCPSite.own_lookups`), or its methods would be "Method
not found" for every caller. Completions follow: a served prompt or template may have
completers no registered one has.
"""

from __future__ import annotations

import copy
import weakref
from typing import TYPE_CHECKING, Any

from django_mcp.declarations.completion import choices_completer
from django_mcp.listen.fanout import channel_layer
from django_mcp.protocol.tasks import EXTENSION as TASKS_EXTENSION
from django_mcp.server.tasking import supports_tasks

if TYPE_CHECKING:
    from django_mcp.declarations.prompts import PromptSpec
    from django_mcp.declarations.resources import ResourceTemplateSpec
    from django_mcp.sites import MCPSite

#: site -> (its generation when derived, whether it can listen, its capabilities)
_derived: weakref.WeakKeyDictionary[MCPSite, tuple[int, bool, dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _has_completions(site: MCPSite) -> bool:
    """Whether anything on ``site`` can be completed: a prompt or template with completers,
    or an argument whose type lists its choices (``Literal``, ``Enum``), or a prompt or
    template a lookup of the site's own serves."""
    if site.own_lookups & {"prompts", "resources"}:
        return True
    registry = site.registry
    specs: list[PromptSpec | ResourceTemplateSpec] = [
        *registry.prompts.values(),
        *registry.templates.values(),
    ]
    for spec in specs:
        if spec.completers:
            return True
        fields = spec.signature.model.model_fields
        if any(choices_completer(info.annotation) for info in fields.values()):
            return True
    return False


#: The site asked about last and what was derived for it: a project serves one site, or
#: a few, so this answers most requests without the table's lookup (which builds a weak
#: reference to hash the key). The reference is weak too: it keeps no site alive.
_last: tuple[weakref.ref[MCPSite], tuple[int, bool, dict[str, Any]]] | None = None


def _derive(site: MCPSite) -> tuple[int, bool, dict[str, Any]]:
    global _last
    last = _last  # one read: another thread may replace it (never in part)
    if last is not None and last[0]() is site and last[1][0] == site.generation:
        return last[1]
    cached = _derived.get(site)
    if cached is not None and cached[0] == site.generation:
        _last = (weakref.ref(site), cached)
        return cached
    registry = site.registry
    own = site.own_lookups
    listen = channel_layer() is not None
    capabilities: dict[str, Any] = {}
    if registry.tools or "tools" in own:
        capabilities["tools"] = {"listChanged": True} if listen else {}
    if registry.resources or registry.templates or "resources" in own:
        capabilities["resources"] = {"subscribe": True, "listChanged": True} if listen else {}
    if registry.prompts or "prompts" in own:
        capabilities["prompts"] = {"listChanged": True} if listen else {}
    if _has_completions(site):
        capabilities["completions"] = {}
    if supports_tasks(site):  # an empty object means support (ext-tasks tasks.md)
        capabilities["extensions"] = {TASKS_EXTENSION: {}}
    derived = _derived[site] = (site.generation, listen, capabilities)
    _last = (weakref.ref(site), derived)
    return derived


#: The capabilities whose flags promise notifications that only a listen stream carries.
_NOTIFIED: tuple[str, ...] = ("tools", "resources", "prompts")


def capabilities(site: MCPSite, *, listen_here: bool = True) -> dict[str, Any]:
    """The ``ServerCapabilities`` of ``site`` (a copy the caller may change).

    ``listen_here=False``: the server answering cannot hold a listen stream (a WSGI worker
    that refuses every one), so ``listChanged`` and ``subscribe`` are left out: they would
    promise notifications no stream of this server could carry."""
    offered = copy.deepcopy(_derive(site)[2])
    if not listen_here:
        for name in _NOTIFIED:
            if name in offered:
                offered[name] = {}
    return offered


def offers(site: MCPSite, capability: str) -> bool:
    """Whether ``site`` advertises ``capability``: what admission asks on every request,
    answered from the derived table without the copy :func:`capabilities` makes."""
    return capability in _derive(site)[2]


def supports_listen(site: MCPSite) -> bool:
    """Whether ``subscriptions/listen`` is offered: a channel layer is configured."""
    return _derive(site)[1]
