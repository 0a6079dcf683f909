"""Several MCP endpoints in one project, each an MCPSite, like several admin sites."""

from django.urls import include, path

import django_mcp
from django_mcp import MCPSite

staff = MCPSite(name="staff")


@django_mcp.tool(site=staff, destructive=True)
def rebuild_search_index() -> str:
    """Rebuild the full-text index (only on the staff endpoint)."""
    return "Rebuild scheduled."


# urls.py
urlpatterns = [
    path("mcp", include("django_mcp.urls")),  # the default site, at /mcp and /mcp/
    path("staff/mcp", staff.urls),  # the staff site, at /staff/mcp and /staff/mcp/
]
