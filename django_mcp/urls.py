"""``path("mcp", include("django_mcp.urls"))`` serves the default site at ``/mcp`` and ``/mcp/``."""

from __future__ import annotations

from django_mcp.conf import require_installed

require_installed('include("django_mcp.urls")')

from django_mcp.sites import site  # noqa: E402

app_name = "django_mcp"
urlpatterns = site.get_urls()
