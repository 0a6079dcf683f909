"""A project that routes the endpoint or lists the middleware without ``"django_mcp"`` in
``INSTALLED_APPS`` is told so in words (django_mcp/conf.py, ``require_installed``), not
with Django's error about a model outside any installed app, which names
``django_mcp.requestlog.models.RequestLog`` and leaves the reader to guess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PROJECT = """
import django
from django.conf import settings

settings.configure(
    SECRET_KEY="not-a-secret",
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth"],
    MIDDLEWARE=["django_mcp.middleware.MCPMiddleware"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
)
django.setup()
import {module}
"""


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("django_mcp.middleware", "django_mcp.middleware.MCPMiddleware (in MIDDLEWARE)"),
        ("django_mcp.urls", 'include("django_mcp.urls")'),
    ],
)
def test_a_project_without_the_app_is_told_to_install_it(module, names):
    result = subprocess.run(
        [sys.executable, "-c", PROJECT.replace("{module}", module)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip

    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("django.core.exceptions.ImproperlyConfigured: ")
    assert names in last
    assert "needs 'django_mcp' in INSTALLED_APPS" in last
    assert "RequestLog" not in result.stderr
