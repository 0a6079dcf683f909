"""Imported by ``django.contrib.admin``'s autodiscover: registers the read-only admins of
the request log (:mod:`django_mcp.requestlog.admin`) and of MCP tasks
(:mod:`django_mcp.tasks.admin`), and the access-token admin (:mod:`django_mcp.auth.admin`)."""

from django_mcp.auth import admin as auth_admin
from django_mcp.requestlog import admin as requestlog_admin
from django_mcp.tasks import admin as tasks_admin

__all__ = ["auth_admin", "requestlog_admin", "tasks_admin"]
