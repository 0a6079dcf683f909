"""The 64 KB ``MAX_REQUEST_BYTES`` of ``limits_settings`` with the request log on, for the
live test that checks a refused body is recorded (the database is the file
``DJANGO_MCP_SQLITE`` names)."""

from __future__ import annotations

from tests.http.limits_settings import *  # noqa: F403
from tests.http.limits_settings import DJANGO_MCP

DJANGO_MCP = {**DJANGO_MCP, "REQUEST_LOG": "all"}
