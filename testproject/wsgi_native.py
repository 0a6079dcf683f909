"""The testproject served through django-mcp's native WSGI path: ``NativeMCPWSGI`` serves
the MCP endpoints' POSTs itself (no middleware stack, no URL resolution per request) and
hands every other request to Django's application (docs/deployment.md, "The native
WSGI path")."""

import os

from django.core.wsgi import get_wsgi_application

from django_mcp.http.native_wsgi import NativeMCPWSGI

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings")
application = NativeMCPWSGI(get_wsgi_application())
