"""Imported by ``django.contrib.admin``'s autodiscover: registers the request-log admin
(:mod:`django_mcp.requestlog.admin`) and the access-token admin
(:mod:`django_mcp.auth.admin`)."""

from django_mcp.auth import admin as auth_admin
from django_mcp.requestlog import admin as requestlog_admin

__all__ = ["auth_admin", "requestlog_admin"]
