"""The settings path of the middleware: ``"django_mcp.middleware.MCPMiddleware"``.

Its code lives in :mod:`django_mcp.http.middleware`; this stable path is the one to put in
``MIDDLEWARE``, as ``corsheaders.middleware.CorsMiddleware`` is for django-cors-headers.
"""

from django_mcp.conf import require_installed

require_installed("django_mcp.middleware.MCPMiddleware (in MIDDLEWARE)")

from django_mcp.http.middleware import MCPMiddleware  # noqa: E402

__all__ = ["MCPMiddleware"]
