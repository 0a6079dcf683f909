"""django-mcp: serve MCP 2026-07-28 tools, resources and prompts from a Django project.

Declare them in an app's ``mcp.py``::

    import django_mcp

    @django_mcp.tool(read_only=True)
    def search_books(query: str) -> list[BookOut]:
        \"\"\"Find books whose title contains the query.\"\"\"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .content import (
    Annotations,
    Audio,
    EmbeddedResource,
    Image,
    ResourceContents,
    ResourceLink,
    Text,
    ToolResult,
)
from .context import Context
from .exceptions import AlreadyRegistered, InvalidDeclaration, NotRegistered, ToolError
from .prompts import Message, assistant, user
from .protocol.errors import MCPError
from .schema import MCPHeader

if TYPE_CHECKING:
    from .sites import MCPSite

__version__ = "0.1.0"

__all__ = [
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
    # The site module imports Django machinery; load it only when asked for.
    if name in ("site", "MCPSite", "autodiscover"):
        from . import sites

        return getattr(sites, name)
    if name in (
        "notify_tools_changed",
        "notify_prompts_changed",
        "notify_resources_changed",
        "notify_resource_updated",
    ):
        from . import subscriptions

        return getattr(subscriptions, name)
    if name == "watch":
        from .watch import watch

        return watch
    if name in ("ModelTools", "DEFAULT_PERMISSIONS"):
        from . import modeltools

        return getattr(modeltools, name)
    raise AttributeError(name)


def tool(func: Callable[..., Any] | None = None, /, *, site: MCPSite | None = None, **options: Any) -> Any:
    """Register a tool on ``site`` (the default site unless given); bare or called."""
    from .sites import site as default_site

    target = site if site is not None else default_site
    return target.tool(func, **options) if func is not None else target.tool(**options)


def resource(uri: str, /, *, site: MCPSite | None = None, **options: Any) -> Any:
    """Register a resource (fixed URI) or resource template (RFC 6570) on ``site``."""
    from .sites import site as default_site

    return (site if site is not None else default_site).resource(uri, **options)


def prompt(func: Callable[..., Any] | None = None, /, *, site: MCPSite | None = None, **options: Any) -> Any:
    """Register a prompt on ``site`` (the default site unless given); bare or called."""
    from .sites import site as default_site

    target = site if site is not None else default_site
    return target.prompt(func, **options) if func is not None else target.prompt(**options)


def register(*models: Any, site: MCPSite | None = None) -> Callable[[type[Any]], type[Any]]:
    """Class decorator registering ``models`` with a ``ModelTools`` subclass, like
    ``admin.register``::

        @django_mcp.register(Book)
        class BookTools(django_mcp.ModelTools):
            actions = ["list", "get", "create"]
    """
    from .sites import site as default_site

    def decorator(tools_class: type[Any]) -> type[Any]:
        target = site if site is not None else default_site
        for model in models:
            target.register(model, tools_class)
        return tools_class

    return decorator
