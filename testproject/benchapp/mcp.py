"""The tool every server in the benchmark serves: ``add(1, 2)``."""

from __future__ import annotations

import django_mcp


@django_mcp.tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
