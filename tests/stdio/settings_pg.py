"""The stdio test settings on PostgreSQL (database ``$PGDATABASE``; ``DJANGO_MCP_SQLITE``
must be set, to anything, for the settings this extends)."""

from __future__ import annotations

import os

from tests.stdio.settings import *  # noqa: F403

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ["PGDATABASE"],
        "USER": os.environ.get("PGUSER", "postgres"),
        "HOST": os.environ.get("PGHOST", "127.0.0.1"),
        "PORT": os.environ.get("PGPORT", "5432"),
    }
}
