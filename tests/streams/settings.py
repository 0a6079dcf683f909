"""Settings of the live servers the stream tests start (and of in-process stream tests).

The testproject's settings, with the ``streams`` site mounted (``tests.streams.urls``), short
listen keep-alives, no request log (SQLite stays uncontended), and, when
``DJANGO_MCP_REDIS_PREFIX`` is set, the Redis channel layer and PostgreSQL database of
``testproject.settings_redis`` (the two-process fan-out).
"""

from __future__ import annotations

import os

from testproject.settings import *  # noqa: F403
from testproject.settings import DJANGO_MCP

ROOT_URLCONF = "tests.streams.urls"

DJANGO_MCP = {
    **DJANGO_MCP,
    "LISTEN_KEEPALIVE_SECONDS": float(os.environ.get("STREAMS_KEEPALIVE_SECONDS", "0.2")),
    "LISTEN_MAX_SECONDS": float(os.environ.get("STREAMS_LISTEN_MAX_SECONDS", "300")),
    # Every test client is anonymous on 127.0.0.1; a closed stream is given back a moment
    # after the client leaves, so the tests that do not test the limits keep clear of them.
    "LISTEN_MAX_STREAMS_PER_CALLER": int(os.environ.get("STREAMS_LISTEN_PER_CALLER", "50")),
    "LISTEN_WSGI_STREAMS": int(os.environ.get("STREAMS_LISTEN_WSGI_STREAMS", "0")),
    "REQUEST_LOG": "off",
}

if os.environ.get("DJANGO_MCP_REDIS_PREFIX"):
    from testproject.settings_redis import CHANNEL_LAYERS, DATABASES  # noqa: F401
