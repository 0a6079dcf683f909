"""The server capabilities a site advertises in ``server/discover`` (server/discover.mdx).

They follow from what is registered (tools, resources, prompts, completers) and from the
deployment: ``listChanged`` and resource subscriptions are offered only when a channel
layer can carry change notifications. Derived once per registry state, because admission
asks on every request.
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
    or an argument whose type lists its choices (``Literal``, ``Enum``)."""
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


def _derive(site: MCPSite) -> tuple[int, bool, dict[str, Any]]:
    cached = _derived.get(site)
    if cached is not None and cached[0] == site.generation:
        return cached
    registry = site.registry
    listen = channel_layer() is not None
    capabilities: dict[str, Any] = {}
    if registry.tools:
        capabilities["tools"] = {"listChanged": True} if listen else {}
    if registry.resources or registry.templates:
        capabilities["resources"] = {"subscribe": True, "listChanged": True} if listen else {}
    if registry.prompts:
        capabilities["prompts"] = {"listChanged": True} if listen else {}
    if _has_completions(site):
        capabilities["completions"] = {}
    if supports_tasks(site):  # an empty object means support (ext-tasks tasks.md)
        capabilities["extensions"] = {TASKS_EXTENSION: {}}
    derived = _derived[site] = (site.generation, listen, capabilities)
    return derived


def capabilities(site: MCPSite) -> dict[str, Any]:
    """The ``ServerCapabilities`` of ``site`` (a copy the caller may change)."""
    return copy.deepcopy(_derive(site)[2])


def offers(site: MCPSite, capability: str) -> bool:
    """Whether ``site`` advertises ``capability`` (admission asks on every request: no copy)."""
    return capability in _derive(site)[2]


def supports_listen(site: MCPSite) -> bool:
    """Whether ``subscriptions/listen`` is offered: a channel layer is configured."""
    return _derive(site)[1]
