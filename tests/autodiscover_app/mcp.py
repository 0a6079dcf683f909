"""A broken ``mcp.py``: it registers one tool, then fails, like a typo half-way down."""

from __future__ import annotations

from tests.autodiscover_app.registry import site


@site.tool
def half_registered() -> str:
    return "should be rolled back"


raise RuntimeError("broken mcp.py in tests.autodiscover_app")
