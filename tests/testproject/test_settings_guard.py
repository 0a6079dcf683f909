"""The testproject refuses the public demo ``SECRET_KEY`` and ``DEBUG`` outside the demo
and the tests: copied into a deployment as is, it fails at start-up instead of running
with a key anyone can read (which signs cursors and ``requestState``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.live import REPO

GUARD_VARIABLES = ("DJANGO_SECRET_KEY", "DJANGO_DEBUG", "DJANGO_MCP_DEMO", "DJANGO_MCP_INSECURE")


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    """Import testproject.settings in a fresh interpreter (no pytest) with ``env``."""
    clean = {k: v for k, v in os.environ.items() if k not in GUARD_VARIABLES}
    clean.update(PYTHONPATH=str(REPO), **env)
    code = "import testproject.settings as s; print(s.DEBUG, s.SECRET_KEY)"
    return subprocess.run(
        [sys.executable, "-c", code],
        env=clean,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_no_key_outside_the_demo_is_refused():
    result = load_settings()
    assert result.returncode != 0
    assert "Set DJANGO_SECRET_KEY" in result.stderr


def test_the_public_key_given_explicitly_is_refused():
    result = load_settings(DJANGO_SECRET_KEY="django-mcp-demo-not-secret")
    assert "Set DJANGO_SECRET_KEY" in result.stderr


def test_debug_outside_the_demo_is_refused():
    result = load_settings(DJANGO_SECRET_KEY="own-key", DJANGO_DEBUG="1")
    assert "DEBUG is only for" in result.stderr


def test_an_own_key_runs_without_debug():
    result = load_settings(DJANGO_SECRET_KEY="own-key")
    assert result.stdout.split() == ["False", "own-key"], result.stderr


@pytest.mark.parametrize("variable", ["DJANGO_MCP_DEMO", "DJANGO_MCP_INSECURE"])
def test_the_demo_and_the_test_servers_may_use_the_demo_key_and_debug(variable):
    result = load_settings(**{variable: "1"})
    assert result.stdout.split() == ["True", "django-mcp-demo-not-secret"], result.stderr
