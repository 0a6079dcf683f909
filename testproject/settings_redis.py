"""The testproject with a Redis channel layer and PostgreSQL: several server processes share
``subscriptions/listen`` fan-out (Redis) and data (PostgreSQL), as in production.

Redis at ``redis://127.0.0.1:6379`` (``DJANGO_MCP_REDIS_URL``); every key is prefixed with
``DJANGO_MCP_REDIS_PREFIX`` so concurrent test runs sharing one Redis never see each other's
events. PostgreSQL at 127.0.0.1:5432, trust auth, user ``postgres``, database ``test``
(``PG*`` variables override).
"""

from __future__ import annotations

import os

from .settings import *  # noqa: F403

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # socket_timeout above channels_redis's 5 s blocking pop: redis-py 8 times a read
            # out after 5 s by default, failing every quiet wait (docs/deployment.md).
            "hosts": [
                {
                    "address": os.environ.get("DJANGO_MCP_REDIS_URL", "redis://127.0.0.1:6379"),
                    "socket_timeout": 30,
                }
            ],
            "prefix": os.environ.get("DJANGO_MCP_REDIS_PREFIX", "django_mcp"),
        },
    }
}

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("PGDATABASE", "test"),
        "USER": os.environ.get("PGUSER", "postgres"),
        "HOST": os.environ.get("PGHOST", "127.0.0.1"),
        "PORT": os.environ.get("PGPORT", "5432"),
    }
}
