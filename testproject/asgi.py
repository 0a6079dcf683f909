"""The testproject's ASGI application, as a deployment should wrap it: ``BodyLimit`` stops
reading an MCP request body once it passes ``MAX_REQUEST_BYTES`` (docs/security.md)."""

import os

from django.core.asgi import get_asgi_application

from django_mcp.http.asgi import BodyLimit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "testproject.settings")
application = BodyLimit(get_asgi_application())
