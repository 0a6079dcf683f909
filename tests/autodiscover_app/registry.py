"""The site the throwaway app's declaration modules register on."""

from __future__ import annotations

from django_mcp.sites import MCPSite

site = MCPSite(name="autodiscover-test")
