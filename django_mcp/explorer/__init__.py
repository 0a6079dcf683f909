"""The MCP explorer and the request-log dashboard, in the Django admin (docs/guides/explorer.md).

:mod:`~django_mcp.explorer.admin` adds their URLs to an ``AdminSite`` and links them from
the admin index; :mod:`~django_mcp.explorer.catalogue` describes a site's declarations;
:mod:`~django_mcp.explorer.stats` and :mod:`~django_mcp.explorer.svg` make the dashboard.
"""
