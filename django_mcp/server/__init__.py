"""The transport-independent server: :class:`MCPServer` admits one message and dispatches
it; the per-request :class:`Context`, input requests and their rounds, pagination and the
method handlers live beside it. Every transport (HTTP, stdio, the test client) calls it."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django_mcp.server.dispatch import MCPServer, Reply

__all__ = ["MCPServer", "Reply"]


def __getattr__(name: str) -> Any:
    # Loaded on first use, so importing ``django_mcp.server.context`` (which declarations'
    # users reach for) does not import every handler.
    if name in __all__:
        return getattr(import_module("django_mcp.server.dispatch"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
