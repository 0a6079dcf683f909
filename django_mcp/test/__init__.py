"""Testing MCP endpoints the way DRF's ``APIClient`` tests APIs: :class:`MCPClient` and
:class:`AsyncMCPClient` talk MCP 2026-07-28 over Django's test clients, through the real
middleware and view. The pytest plugin (:mod:`django_mcp.test.pytest_plugin`, registered
as ``django_mcp``) provides them as the ``mcp_client`` and ``async_mcp_client`` fixtures.
See docs/guides/testing.md.
"""

from __future__ import annotations

from django_mcp.test.aclient import AsyncListenStream, AsyncMCPClient
from django_mcp.test.client import ListenStream, MCPClient
from django_mcp.test.results import (
    CompletionResult,
    DiscoverResult,
    InputRequiredError,
    MCPClientError,
    PromptResult,
    ReadResourceResult,
    ToolCallResult,
)

__all__ = [
    "AsyncListenStream",
    "AsyncMCPClient",
    "CompletionResult",
    "DiscoverResult",
    "InputRequiredError",
    "ListenStream",
    "MCPClient",
    "MCPClientError",
    "PromptResult",
    "ReadResourceResult",
    "ToolCallResult",
]
