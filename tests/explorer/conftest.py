"""Fixtures for the explorer and dashboard tests: fast password hashing, seeded log rows."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from django_mcp.requestlog import summaries
from django_mcp.requestlog.models import RequestLog, ServedRevision


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def seed(count: int = 300, *, hours: int = 20) -> list[RequestLog]:
    """``count`` log rows over the last ``hours``: search_books busy and fast, get_book
    slower, a tenth of set_price failing, with a deterministic spread of latencies; and
    their hourly summaries, rebuilt from the rows as ``mcp_rebuild_log_summaries`` does."""
    rng = random.Random(7)
    now = timezone.now()
    rows = []
    for i in range(count):
        target, base = rng.choice(
            [("search_books", 5.0), ("search_books", 5.0), ("get_book", 40.0), ("set_price", 12.0)]
        )
        failed = target == "set_price" and i % 10 == 0
        rows.append(
            RequestLog(
                started_at=now - timedelta(minutes=rng.randrange(hours * 60)),
                site="mcp",
                method="tools/call",
                target=target,
                outcome="tool_error" if failed else "ok",
                http_status=200,
                duration_ms=base + rng.random() * base,
                client_name="seed-client",
                client_version="1.0",
                declared_revision="2026-07-28",
                served_revision="2026-07-28",
                served_how="supported",
            )
        )
    RequestLog.objects.bulk_create(rows)
    summaries.rebuild(None, "default")
    ServedRevision.objects.create(
        revision="2027-01-01",
        client_name="future-client",
        client_version="9",
        count=3,
        first_seen=now,
        last_seen=now,
    )
    return rows
