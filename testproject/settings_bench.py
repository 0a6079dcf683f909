"""Settings for the benchmark (``python -m bench``): the test project, tuned by environment.

``BENCH_REQUEST_LOG`` sets ``DJANGO_MCP["REQUEST_LOG"]`` (``all`` or ``off``, default
``all``). The database is PostgreSQL (``DJANGO_MCP_DB=postgres`` is implied; ``PGDATABASE``
names it, default ``django_mcp_bench``) because the request log and the ModelTools scenario
must hit a real server database. ``DEBUG`` is off: with it on Django keeps every SQL query
in memory, which would be measured as a leak.

``BENCH_REDIS=1`` (the scale-out section) configures what several worker processes share in
production: the Channels layer on Redis (``channels_redis``, so a change published by one
worker reaches a ``subscriptions/listen`` stream held by another) and the default cache on
Redis. ``BENCH_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``) and ``BENCH_REDIS_PREFIX``
(one per run, so concurrent runs never see each other's events or keys) tune them.
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_MCP_DB", "postgres")
os.environ.setdefault("PGDATABASE", "django_mcp_bench")

from testproject.settings import *  # noqa: F403
from testproject.settings import DJANGO_MCP, INSTALLED_APPS

DEBUG = False
INSTALLED_APPS = [*INSTALLED_APPS, "testproject.benchapp"]
ROOT_URLCONF = "testproject.benchapp.urls"
DJANGO_MCP = {
    **DJANGO_MCP,
    "REQUEST_LOG": os.environ.get("BENCH_REQUEST_LOG", "all"),
}
if os.environ.get("BENCH_REDIS") == "1":
    _REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
    _REDIS_PREFIX = os.environ.get("BENCH_REDIS_PREFIX", "django_mcp_bench")
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # socket_timeout above the layer's 5 s blocking pop (docs/deployment.md).
            "CONFIG": {
                "hosts": [{"address": _REDIS_URL, "socket_timeout": 30}],
                "prefix": _REDIS_PREFIX,
            },
        }
    }
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _REDIS_URL,
            "KEY_PREFIX": _REDIS_PREFIX,
        }
    }
# No per-request logging to the console: the benchmark measures the server, not a terminal.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django_mcp": {"handlers": ["console"], "level": "WARNING"}},
}
