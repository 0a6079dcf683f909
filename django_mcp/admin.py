"""Imported by ``django.contrib.admin``'s autodiscover: registers the request-log admin
(:mod:`django_mcp.requestlog.admin`)."""

from django_mcp.requestlog import admin as requestlog_admin

__all__ = ["requestlog_admin"]
