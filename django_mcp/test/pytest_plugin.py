"""The ``django_mcp`` pytest plugin (``pytest11`` entry point): ``mcp_client`` and
``async_mcp_client`` fixtures bound to the default site's endpoint
(``reverse("django_mcp:endpoint")``).

To point them elsewhere, override the ``mcp_endpoint`` fixture (a path) in a conftest.
Needs pytest-django (the fixtures use its ``db`` access only when a test asks for it).
"""

from __future__ import annotations

import pytest

from django_mcp.test.aclient import AsyncMCPClient
from django_mcp.test.client import MCPClient


@pytest.fixture
def mcp_endpoint() -> str | None:
    """The path the client fixtures POST to; None means the default site's URL."""
    return None


@pytest.fixture
def mcp_client(mcp_endpoint: str | None) -> MCPClient:
    """An :class:`~django_mcp.test.MCPClient` for the endpoint."""
    return MCPClient(mcp_endpoint)


@pytest.fixture
def async_mcp_client(mcp_endpoint: str | None) -> AsyncMCPClient:
    """An :class:`~django_mcp.test.AsyncMCPClient` for the endpoint."""
    return AsyncMCPClient(mcp_endpoint)
