"""A minimal Django project serving ``add`` with django-mcpz 1.2 (a peer in the benchmark).

Same middleware weight as a plain project would have for an API: no sessions, no admin.
Run under gunicorn with ``DJANGO_SETTINGS_MODULE=bench.peers.mcpz_settings``.
"""

from __future__ import annotations

SECRET_KEY = "bench-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth"]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
]
ROOT_URLCONF = "bench.peers.mcpz_urls"
DATABASES: dict[str, dict[str, str]] = {}
USE_TZ = True
