"""The app's models module, as Django expects it: the request log lives in
:mod:`django_mcp.requestlog.models` (app label ``django_mcp``, tables unchanged)."""

from django_mcp.requestlog.models import RequestLog, ServedRevision

__all__ = ["RequestLog", "ServedRevision"]
