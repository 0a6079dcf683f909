"""The testproject's settings for mypy's Django plugin, which loads them to type-check
django_mcp without serving anything: the demo key and DEBUG are harmless there."""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_MCP_INSECURE", "1")

from .settings import *  # noqa: F403
