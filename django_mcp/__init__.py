"""django-mcp: serve MCP 2026-07-28 tools, resources and prompts from a Django project.

Declare them in an app's ``mcp.py``::

    import django_mcp

    @django_mcp.tool(read_only=True)
    def search_books(query: str) -> list[BookOut]:
        \"\"\"Find books whose title contains the query.\"\"\"

Every public name is loaded on first use (PEP 562), so importing the pure protocol core
(``django_mcp.protocol``) never imports Django.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, overload

if TYPE_CHECKING:
    from django_mcp.declarations.content import (
        Annotations,
        Audio,
        EmbeddedResource,
        Image,
        ResourceContents,
        ResourceLink,
        Text,
        ToolResult,
    )
    from django_mcp.declarations.options import PromptOptions, ResourceOptions, ToolOptions
    from django_mcp.declarations.prompts import Message, assistant, user
    from django_mcp.declarations.signature import MCPHeader
    from django_mcp.exceptions import (
        AlreadyRegistered,
        InvalidDeclaration,
        NotRegistered,
        ToolError,
    )
    from django_mcp.listen.fanout import (
        notify_prompts_changed,
        notify_resource_updated,
        notify_resources_changed,
        notify_tools_changed,
    )
    from django_mcp.listen.watch import watch
    from django_mcp.modeltools import DEFAULT_PERMISSIONS, ModelTools
    from django_mcp.protocol.errors import MCPError
    from django_mcp.server.context import Context
    from django_mcp.sites import MCPSite, autodiscover, site

from django_mcp import _compat

_compat.install()  # old import paths (django_mcp.content, ...) keep working, with a warning

from django_mcp._version import __version__ as __version__  # noqa: E402

#: Public name -> the module that defines it.
_EXPORTS = {
    "Annotations": "declarations.content",
    "Audio": "declarations.content",
    "EmbeddedResource": "declarations.content",
    "Image": "declarations.content",
    "ResourceContents": "declarations.content",
    "ResourceLink": "declarations.content",
    "Text": "declarations.content",
    "ToolResult": "declarations.content",
    "Context": "server.context",
    "AlreadyRegistered": "exceptions",
    "InvalidDeclaration": "exceptions",
    "NotRegistered": "exceptions",
    "ToolError": "exceptions",
    "DEFAULT_PERMISSIONS": "modeltools",
    "ModelTools": "modeltools",
    "Message": "declarations.prompts",
    "assistant": "declarations.prompts",
    "user": "declarations.prompts",
    "MCPError": "protocol.errors",
    "MCPHeader": "declarations.signature",
    "MCPSite": "sites",
    "autodiscover": "sites",
    "site": "sites",
    "notify_prompts_changed": "listen.fanout",
    "notify_resource_updated": "listen.fanout",
    "notify_resources_changed": "listen.fanout",
    "notify_tools_changed": "listen.fanout",
    "watch": "listen.watch",
}

__all__ = [
    "DEFAULT_PERMISSIONS",
    "AlreadyRegistered",
    "Annotations",
    "Audio",
    "Context",
    "EmbeddedResource",
    "Image",
    "InvalidDeclaration",
    "MCPError",
    "MCPHeader",
    "MCPSite",
    "Message",
    "ModelTools",
    "NotRegistered",
    "ResourceContents",
    "ResourceLink",
    "Text",
    "ToolError",
    "ToolResult",
    "assistant",
    "autodiscover",
    "notify_prompts_changed",
    "notify_resource_updated",
    "notify_resources_changed",
    "notify_tools_changed",
    "prompt",
    "register",
    "resource",
    "site",
    "tool",
    "user",
    "watch",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'django_mcp' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    if name != "site":  # the default site stays looked up, so it can be swapped in tests
        globals()[name] = value
    return value


F = TypeVar("F", bound=Callable[..., Any])


def _site(site: MCPSite | None) -> MCPSite:
    if site is not None:
        return site
    from django_mcp.sites import site as default_site

    return default_site


@overload
def tool(func: F, /, *, site: MCPSite | None = None) -> F: ...
@overload
def tool(
    func: None = None, /, *, site: MCPSite | None = None, **options: Unpack[ToolOptions]
) -> Callable[[F], F]: ...


def tool(
    func: F | None = None, /, *, site: MCPSite | None = None, **options: Unpack[ToolOptions]
) -> F | Callable[[F], F]:
    """Register a tool on ``site`` (the default site unless given); bare or called.

    The options (``name``, ``title``, ``read_only``, ``permission_required``, ...) are
    :class:`~django_mcp.declarations.options.ToolOptions`.
    """
    target = _site(site)
    return target.tool(func) if func is not None else target.tool(**options)


def resource(
    uri: str, /, *, site: MCPSite | None = None, **options: Unpack[ResourceOptions]
) -> Callable[[F], F]:
    """Register a resource (fixed URI) or resource template (RFC 6570) on ``site``; the
    options are :class:`~django_mcp.declarations.options.ResourceOptions`."""
    return _site(site).resource(uri, **options)


@overload
def prompt(func: F, /, *, site: MCPSite | None = None) -> F: ...
@overload
def prompt(
    func: None = None, /, *, site: MCPSite | None = None, **options: Unpack[PromptOptions]
) -> Callable[[F], F]: ...


def prompt(
    func: F | None = None, /, *, site: MCPSite | None = None, **options: Unpack[PromptOptions]
) -> F | Callable[[F], F]:
    """Register a prompt on ``site`` (the default site unless given); bare or called; the
    options are :class:`~django_mcp.declarations.options.PromptOptions`."""
    target = _site(site)
    return target.prompt(func) if func is not None else target.prompt(**options)


def register(*models: Any, site: MCPSite | None = None) -> Callable[[type[Any]], type[Any]]:
    """Class decorator registering ``models`` with a ``ModelTools`` subclass, like
    ``admin.register``::

        @django_mcp.register(Book)
        class BookTools(django_mcp.ModelTools):
            actions = ["list", "get", "create"]
    """

    def decorator(tools_class: type[Any]) -> type[Any]:
        target = _site(site)
        for model in models:
            target.register(model, tools_class)
        return tools_class

    return decorator
