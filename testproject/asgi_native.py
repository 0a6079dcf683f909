"""The testproject served through django-mcp's native ASGI path: ``NativeMCP`` serves the
MCP endpoints' POSTs itself (no Django handler, no per-request thread) and hands every
other request to Django's application (docs/deployment.md, "The native ASGI path")."""

import os

from django.core.asgi import get_asgi_application

from django_mcp.http.native import NativeMCP

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings")
application = NativeMCP(get_asgi_application())
