"""Settings of the ``mcp_stdio`` processes the stdio tests start: the testproject plus this
package as an app (its ``mcp.py`` adds a few tools), on a SQLite file of their own
(``DJANGO_MCP_SQLITE``) whatever database the test run itself uses."""

from __future__ import annotations

import os

from testproject.settings import *  # noqa: F403
from testproject.settings import DJANGO_MCP, INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.stdio"]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["DJANGO_MCP_SQLITE"],
    }
}
#: Two requests may wait for a worker (the default is 32), so that a test fills the queue
#: with a dozen requests.
DJANGO_MCP = {
    **DJANGO_MCP,
    "LISTEN_KEEPALIVE_SECONDS": 0.1,
    "REQUEST_LOG": "off",
    "STDIO_MAX_QUEUED_REQUESTS": 2,
}
