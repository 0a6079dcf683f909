"""A URLconf for tests that serve a fresh ``MCPSite``: the ``mcp_site`` fixture fills it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.urls import URLPattern, URLResolver

urlpatterns: list[URLPattern | URLResolver] = []
