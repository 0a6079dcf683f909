"""The app's models module, as Django expects it: the request log lives in
:mod:`django_mcp.requestlog.models`, access tokens in :mod:`django_mcp.auth.models` and MCP
tasks in :mod:`django_mcp.tasks.models` (app label ``django_mcp``)."""

from django_mcp.auth.models import AccessToken
from django_mcp.requestlog.models import RequestLog, RequestLogDay, RequestLogHour, ServedRevision
from django_mcp.tasks.models import MCPTask

__all__ = [
    "AccessToken",
    "MCPTask",
    "RequestLog",
    "RequestLogDay",
    "RequestLogHour",
    "ServedRevision",
]
