"""The hostile-input suite: a small site, the request log on for everything, and the
Hypothesis settings that keep the suite fast and reproducible.

``REQUEST_LOG = "all"`` with a sample rate of 1 and ``REQUEST_LOG_PARAMS`` on, so every
request sent must become one ``RequestLog`` row, params included. Hypothesis runs a fixed
number of examples, derandomized (the same examples on every run and in CI), without a
deadline (the CI machine's speed is not under test) and without an example database
(nothing is written to the work tree).
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, settings

from django_mcp import MCPHeader
from django_mcp.sites import MCPSite
from tests.helpers import override_mcp


def hostile(max_examples: int) -> settings:
    """The Hypothesis settings of this suite, with a test's own number of examples."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=False,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,  # one site and client serve all examples
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )


@pytest.fixture
def site(mcp_site: MCPSite) -> MCPSite:
    """A few tools (one with an ``x-mcp-header`` argument), a resource template and a
    prompt: enough for every method to reach a handler."""

    @mcp_site.tool()
    def echo(text: str) -> str:
        """Return the text."""
        return text

    @mcp_site.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp_site.tool()
    def nested(data: Any) -> str:
        """Accept any JSON value."""
        return type(data).__name__

    @mcp_site.tool()
    def regional(region: Annotated[str, MCPHeader("Region")]) -> str:
        """An argument mirrored in the Mcp-Param-Region header."""
        return region[:50]

    @mcp_site.resource("notes://{name}")
    def note(name: str) -> str:
        """A note by name."""
        return name

    @mcp_site.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    return mcp_site


@pytest.fixture(autouse=True)
def _log_everything() -> Any:
    with override_mcp(REQUEST_LOG="all", REQUEST_LOG_SAMPLE_RATE=1.0, REQUEST_LOG_PARAMS=True):
        yield
