"""The native ASGI path with a site whose own tool lookup queries the database.

A site that overrides ``get_tool`` but says ``decides_per_caller = False`` (its lookup
serves the same tools to everyone, the tools guide allows it) has the lookup asked in
admission, for a tool's ``Mcp-Param-*`` headers and ``scopes_required``, and to decide
whether the call may run on the event loop. A lookup may query the database (tools built
per tenant from rows), which Django refuses on an event loop
(``SynchronousOnlyOperation``): it must run in a worker thread, as a permission check does.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.core.asgi import get_asgi_application
from django.urls import path

from django_mcp import Context
from django_mcp.http.native import NativeMCP
from django_mcp.sites import MCPSite
from tests import urls as test_urls
from tests.http.native_support import call


class RowSite(MCPSite):
    """Serves its registered tools to everyone, after asking the database."""

    decides_per_caller = False

    def get_tool(self, name: str, context: Context | None = None) -> Any:
        get_user_model().objects.exists()  # as a lookup of tools kept in rows would
        return super().get_tool(name, context)


@pytest.fixture
def row_site(settings: Any) -> Any:
    site = RowSite(name="test-native-lookups")
    test_urls.urlpatterns[:] = [path("mcp", site.urls)]
    settings.ROOT_URLCONF = "tests.urls"

    @site.tool
    async def async_add(a: int, b: int) -> int:
        return a + b

    @site.tool
    def add(a: int, b: int) -> int:
        return a + b

    yield site
    test_urls.urlpatterns.clear()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("tool", ["add", "async_add"])
def test_a_lookup_that_queries_the_database_runs_off_the_loop(row_site: Any, tool: str) -> None:
    async def run() -> httpx.Response:
        app = NativeMCP(get_asgi_application())
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await c.request("POST", "/mcp", **call(tool, a=1, b=2))

    response = asyncio.run(run())

    assert response.status_code == 200, response.text
    assert response.json()["result"]["structuredContent"] == 3, response.text
