"""Imported by ``django.contrib.admin``'s autodiscover: registers the read-only admins of
the request log (:mod:`django_mcp.requestlog.admin`) and of MCP tasks
(:mod:`django_mcp.tasks.admin`), the access-token admin (:mod:`django_mcp.auth.admin`), and
adds the MCP explorer and dashboard (:mod:`django_mcp.explorer.admin`) to the default admin
site."""

from django.contrib import admin

from django_mcp.auth import admin as auth_admin
from django_mcp.explorer.admin import install
from django_mcp.requestlog import admin as requestlog_admin
from django_mcp.tasks import admin as tasks_admin

install(admin.site)

__all__ = ["auth_admin", "requestlog_admin", "tasks_admin"]
