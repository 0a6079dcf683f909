"""The app's models module, as Django expects it: the request log lives in
:mod:`django_mcp.requestlog.models` and access tokens in :mod:`django_mcp.auth.models`
(app label ``django_mcp``)."""

from django_mcp.auth.models import AccessToken
from django_mcp.requestlog.models import RequestLog, ServedRevision

__all__ = ["AccessToken", "RequestLog", "ServedRevision"]
