"""A working declarations module."""

from __future__ import annotations

from tests.autodiscover_app.registry import site


@site.tool
def discovered() -> str:
    return "found by autodiscover"
