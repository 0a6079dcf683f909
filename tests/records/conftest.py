"""Fixtures for the request log tests.

The suite-wide ``tests/conftest.py`` already keeps the recorder in the foreground (no
background thread, buffer discarded after each test), so records reach the database only
when a test here calls ``recorder.flush()``: nothing is written behind a test's back and
nothing sleeps.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # admin_client, create_user and the browser login hash passwords; the default hasher is
    # slow on purpose and would dominate these tests' run time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
