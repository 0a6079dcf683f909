"""WSGI entry point of the django-mcpz peer."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.peers.mcpz_settings")
application = get_wsgi_application()
