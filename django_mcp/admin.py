"""Imported by ``django.contrib.admin``'s autodiscover: registers the read-only admins of
the request log (:mod:`django_mcp.requestlog.admin`) and of MCP tasks
(:mod:`django_mcp.tasks.admin`)."""

from django_mcp.requestlog import admin as requestlog_admin
from django_mcp.tasks import admin as tasks_admin

__all__ = ["requestlog_admin", "tasks_admin"]
