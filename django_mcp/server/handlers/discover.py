"""``server/discover`` (server/discover.mdx): versions, capabilities, instructions, cache hints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django_mcp.conf import mcp_settings
from django_mcp.listen import limits
from django_mcp.server.capabilities import capabilities

if TYPE_CHECKING:
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer


def discover(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(mcp_settings.SUPPORTED_REVISIONS),
        "capabilities": capabilities(
            server.site, listen_here=limits.never_held(context.request) is None
        ),
        "ttlMs": int(mcp_settings.DISCOVER_TTL_MS),
        "cacheScope": "public",
    }
    if mcp_settings.INSTRUCTIONS:
        result["instructions"] = str(mcp_settings.INSTRUCTIONS)
    return result
