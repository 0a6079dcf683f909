"""Settings of the demo and test project.

The database is SQLite (embedded, nothing to install) unless ``DJANGO_MCP_DB=postgres``,
which uses PostgreSQL at 127.0.0.1:5432 (trust auth, database ``test``) as CI does.
``DJANGO_MCP_SQLITE`` moves the SQLite file.

``DJANGO_MCP_DEMO=1`` (set by ``scripts/demo`` and the live interop tests) serves the
bookshop alone: the conformance app, whose fixture tools the official conformance suite
calls, is left out so the demo lists only the bookshop's tools.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "django-mcp-demo-not-secret")
DEBUG = os.environ.get("DJANGO_DEBUG", "1") == "1"
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]
DEMO = os.environ.get("DJANGO_MCP_DEMO") == "1"

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_mcp",
    "django_tasks_db",
    "testproject.books",
    *([] if DEMO else ["testproject.conformance"]),
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_mcp.middleware.MCPMiddleware",
]

ROOT_URLCONF = "testproject.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "testproject.wsgi.application"
ASGI_APPLICATION = "testproject.asgi.application"

if os.environ.get("DJANGO_MCP_DB") == "postgres":
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": os.environ.get("PGDATABASE", "test"),
            "USER": os.environ.get("PGUSER", "postgres"),
            "HOST": os.environ.get("PGHOST", "127.0.0.1"),
            "PORT": os.environ.get("PGPORT", "5432"),
            # One test database per test process, so that concurrent runs against one
            # PostgreSQL server (several developers, or CI beside a developer) never share it.
            "TEST": {"NAME": f"test_django_mcp_{os.getpid()}"},
        }
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("DJANGO_MCP_SQLITE", str(BASE_DIR / "db.sqlite3")),
        }
    }

CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# MCP tasks run as Django Tasks jobs on the database backend; `manage.py db_worker` runs them.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en-us"
STATIC_URL = "static/"

DJANGO_MCP = {
    "SERVER_NAME": "django-mcp-demo",
    "INSTRUCTIONS": "A small bookshop: search the catalogue with search_books.",
}

# A co-hosted OAuth authorization server (testproject/oauth_server.py) when
# django-oauth-toolkit is installed; DJANGO_MCP_OAUTH_SERVER=0 leaves it out.
OAUTH_SERVER = os.environ.get("DJANGO_MCP_OAUTH_SERVER", "1") == "1" and bool(
    find_spec("oauth2_provider")
)
if OAUTH_SERVER:
    from testproject.oauth_server import LOGIN_URL, OAUTH2_PROVIDER  # noqa: F401

    INSTALLED_APPS.append("oauth2_provider")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django_mcp": {"handlers": ["console"], "level": "WARNING"}},
}
