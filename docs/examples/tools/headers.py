"""MCPHeader: mirror an argument in an HTTP header so proxies can route on it."""

from typing import Annotated

import django_mcp
from django_mcp import MCPHeader


@django_mcp.tool(read_only=True)
def list_orders(region: Annotated[str, MCPHeader("Region")], limit: int = 10) -> str:
    """List the latest orders of one region (sent as the Mcp-Param-Region header too)."""
    return f"The {limit} latest orders in {region}: none yet."
