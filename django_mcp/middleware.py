"""The settings path of the middleware: ``"django_mcp.middleware.MCPMiddleware"``.

Its code lives in :mod:`django_mcp.http.middleware`; this stable path is the one to put in
``MIDDLEWARE``, as ``corsheaders.middleware.CorsMiddleware`` is for django-cors-headers.
"""

from django_mcp.http.middleware import MCPMiddleware

__all__ = ["MCPMiddleware"]
