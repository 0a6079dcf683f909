"""The testproject with a 64 KB ``MAX_REQUEST_BYTES``, for the live body-limit tests."""

from __future__ import annotations

from testproject.settings import *  # noqa: F403
from testproject.settings import DJANGO_MCP

DJANGO_MCP = {**DJANGO_MCP, "MAX_REQUEST_BYTES": 64 * 1024, "REQUEST_LOG": "off"}
