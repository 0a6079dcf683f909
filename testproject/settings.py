"""Settings of the demo and test project.

The database is SQLite (embedded, nothing to install) unless ``DJANGO_MCP_DB=postgres``,
which uses PostgreSQL at 127.0.0.1:5432 (trust auth, database ``test``) as CI does, or
``DJANGO_MCP_DB=mysql``: MySQL or MariaDB at 127.0.0.1:3306 (user ``root``, no password;
``MYSQL_HOST``, ``MYSQL_PORT``, ``MYSQL_USER``, ``MYSQL_DATABASE`` override that).
``DJANGO_MCP_SQLITE`` moves the SQLite file.

``DJANGO_MCP_DEMO=1`` (set by ``scripts/demo`` and the live interop tests) serves the
bookshop alone: the conformance app, whose fixture tools the official conformance suite
calls, is left out so the demo lists only the bookshop's tools.
"""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]
DEMO = os.environ.get("DJANGO_MCP_DEMO") == "1"
# The public demo SECRET_KEY and DEBUG are for loopback only: the demo (scripts/demo sets
# DJANGO_MCP_DEMO=1), the test suite (pytest, and the servers it starts) and the
# conformance run (both set DJANGO_MCP_INSECURE=1). Anything else must bring its own key
# in DJANGO_SECRET_KEY and runs without DEBUG (check --deploy says why).
INSECURE = DEMO or os.environ.get("DJANGO_MCP_INSECURE") == "1" or "pytest" in sys.modules
PUBLIC_DEMO_SECRET_KEY = "django-mcp-demo-not-secret"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or (PUBLIC_DEMO_SECRET_KEY if INSECURE else "")
if not SECRET_KEY or (SECRET_KEY == PUBLIC_DEMO_SECRET_KEY and not INSECURE):
    raise ImproperlyConfigured(
        "Set DJANGO_SECRET_KEY: the public demo key is only for scripts/demo and the tests "
        "(DJANGO_MCP_DEMO=1 or DJANGO_MCP_INSECURE=1)."
    )
DEBUG = os.environ.get("DJANGO_DEBUG", "1" if INSECURE else "0") == "1"
if DEBUG and not INSECURE:
    raise ImproperlyConfigured(
        "DEBUG is only for scripts/demo and the tests (DJANGO_MCP_DEMO=1 or "
        "DJANGO_MCP_INSECURE=1): it shows tracebacks and internal error details to anyone."
    )

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
elif os.environ.get("DJANGO_MCP_DB") == "mysql":
    try:
        import MySQLdb  # noqa: F401 - mysqlclient, the driver Django supports
    except ImportError:
        # PyMySQL (pure Python, in the test extra: nothing to compile) stands in for it.
        # Django asks the driver for mysqlclient's version (2.2.1 or later for Django 6).
        import pymysql

        pymysql.version_info = (2, 2, 7, "final", 0)
        pymysql.install_as_MySQLdb()
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.mysql",
            "NAME": os.environ.get("MYSQL_DATABASE", "test"),
            "USER": os.environ.get("MYSQL_USER", "root"),
            "HOST": os.environ.get("MYSQL_HOST", "127.0.0.1"),
            "PORT": os.environ.get("MYSQL_PORT", "3306"),
            "OPTIONS": {"charset": "utf8mb4"},
            "TEST": {"NAME": f"test_django_mcp_{os.getpid()}", "CHARSET": "utf8mb4"},
        }
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("DJANGO_MCP_SQLITE", str(BASE_DIR / "db.sqlite3")),
            # The demo runs a server and a task worker on one file (and the live tests add
            # management commands beside them): wait for a lock instead of failing, and take
            # the write lock when a transaction starts, so two writers never deadlock.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
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
    # Listen streams a threaded WSGI worker may hold (0: refused); .ci/conformance.sh sets
    # it for its gunicorn run.
    "LISTEN_WSGI_STREAMS": int(os.environ.get("DJANGO_MCP_LISTEN_WSGI_STREAMS", "0")),
}

# A co-hosted OAuth authorization server (testproject/oauth_server.py) when
# django-oauth-toolkit is installed; DJANGO_MCP_OAUTH_SERVER=0 leaves it out.
OAUTH_SERVER = os.environ.get("DJANGO_MCP_OAUTH_SERVER", "1") == "1" and bool(
    find_spec("oauth2_provider")
)
if OAUTH_SERVER:
    from testproject.oauth_server import LOGIN_URL, OAUTH2_PROVIDER  # noqa: F401

    INSTALLED_APPS.append("oauth2_provider")
    # DJANGO_MCP_OAUTH_RESOURCE=<the endpoint's URL> also validates this server's DOT tokens
    # at the MCP endpoint (off by default; the live OAuth test sets it).
    if os.environ.get("DJANGO_MCP_OAUTH_RESOURCE"):
        DJANGO_MCP["AUTHENTICATORS"] = [
            "django_mcp.auth.tokens.TokenAuthenticator",
            "django_mcp.auth.oauth.dot.DOTAuthenticator",
        ]
        DJANGO_MCP["OAUTH"] = {"RESOURCE": os.environ["DJANGO_MCP_OAUTH_RESOURCE"]}
        # The co-hosted authorization server's issuer is this origin (its metadata document
        # sits at the origin's root): what the protected resource metadata names.
        _resource = urlsplit(os.environ["DJANGO_MCP_OAUTH_RESOURCE"])
        DJANGO_MCP["AUTHORIZATION_SERVERS"] = [f"{_resource.scheme}://{_resource.netloc}"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django_mcp": {"handlers": ["console"], "level": "WARNING"}},
}
