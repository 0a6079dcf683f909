"""Fixtures for the request log tests: no background thread, an empty buffer per test.

The recorder's buffer is process-wide. Each test here starts from an empty buffer with the
background thread stopped and disabled, so records reach the database only when the test
calls ``recorder.flush()``: nothing is written behind the test's back, and nothing sleeps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from django_mcp import recorder

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture(autouse=True)
def _foreground_recorder(settings: Any) -> Iterator[None]:
    recorder.stop()
    recorder.discard()
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_LOG_BACKGROUND": False}
    # admin_client and create_user hash passwords; the default hasher is slow on purpose.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    yield
    recorder.stop()
    recorder.discard()
