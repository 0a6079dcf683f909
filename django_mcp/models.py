"""The app's models module, as Django expects it: the request log lives in
:mod:`django_mcp.requestlog.models` and MCP tasks in :mod:`django_mcp.tasks.models` (app
label ``django_mcp``)."""

from django_mcp.requestlog.models import RequestLog, ServedRevision
from django_mcp.tasks.models import MCPTask

__all__ = ["MCPTask", "RequestLog", "ServedRevision"]
