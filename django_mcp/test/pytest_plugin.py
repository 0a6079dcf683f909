"""The ``django_mcp`` pytest plugin (``pytest11`` entry point): ``mcp_client`` and
``async_mcp_client`` fixtures bound to the default site's endpoint
(``reverse("django_mcp:endpoint")``), and the request log kept in the foreground.

To point the clients elsewhere, override the ``mcp_endpoint`` fixture (a path) in a
conftest. Needs pytest-django (the fixtures use its ``db`` access only when a test asks for
it).

The request log's background writer has no place in a test run, as Django's test runner
swaps the e-mail backend for one that sends nothing: it writes on a connection of its own,
outside each test's transaction, so rows of one test would show up in the next, and after
the last test it may still try to write to the test database Django has just dropped. So
for every test of a project that installs ``django_mcp`` the writer runs in the foreground
(``REQUEST_LOG_BACKGROUND = False``): records reach the database when the test calls
``django_mcp.requestlog.recorder.flush()``, and whatever it left is discarded after it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from django_mcp.test.aclient import AsyncMCPClient
from django_mcp.test.client import MCPClient


@pytest.fixture(autouse=True)
def _django_mcp_request_log_in_the_foreground() -> Iterator[None]:
    """No writer thread during a test; its records are forgotten after it (see above).
    Nothing at all where Django is not configured or django_mcp not installed: the plugin
    is loaded by every pytest run of the environment."""
    from django.conf import settings

    if not settings.configured:
        yield
        return
    from django.apps import apps

    if not apps.ready or not apps.is_installed("django_mcp"):
        yield
        return
    from django.test import override_settings

    from django_mcp.requestlog import recorder

    configured = getattr(settings, "DJANGO_MCP", None)
    chosen = {**(configured if isinstance(configured, dict) else {})}
    chosen["REQUEST_LOG_BACKGROUND"] = False
    with override_settings(DJANGO_MCP=chosen):
        try:
            yield
        finally:
            recorder.stop()
            recorder.discard()


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
