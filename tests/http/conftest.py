"""Fixtures of the HTTP tests that call an application in the test's own thread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core import signals
from django.db import close_old_connections


@pytest.fixture
def keep_the_test_database_connection() -> Iterator[None]:
    """What Django's test client does around each request it makes: the request signals
    do not close old connections, because a WSGI or ASGI application called in process
    (over httpx's transports) runs in the test's thread, and closing its connection would
    end the test's transaction (on PostgreSQL)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)
