"""Generated hostile requests through the real HTTP stack: never a 500, always a
spec-shaped answer, and every request recorded.

Each example is POSTed with the Django test client to a small site (``conftest``), whose
every response ``tests/conftest.py`` validates against the official 2026-07-28 schema
(basic/index.mdx, basic/transports/streamable-http.mdx: a result or a JSON-RPC error,
never a 5xx nor an internal error, the mandated statuses for -32601/-32020/-32021/-32022).
After each example the request log is flushed: there must be one ``RequestLog`` row per
request sent, and ``recorder.stats()`` must show nothing dropped or failed. This runs on
SQLite and on PostgreSQL, which refuses NUL in text.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.helpers import MCP_PATH
from tests.hostile.conftest import hostile
from tests.hostile.strategies import exchanges, raw_bodies

pytestmark = pytest.mark.django_db


class Sender:
    """POSTs requests and checks, after each example, that each one has its row."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.sent = 0

    def post(self, body: bytes, headers: dict[str, str]) -> Any:
        self.sent += 1
        response = self.client.post(
            MCP_PATH, body, content_type="application/json", headers=headers
        )
        assert response.status_code < 500, response.content[:300]
        # An internal error is django-mcp failing on the input: none of the site's tools
        # raises, so every hostile input must get a named refusal or the tool's answer.
        if not getattr(response, "streaming", False):
            assert b'"code":-32603' not in response.content, response.content[:300]
        return response

    def assert_every_request_recorded(self) -> None:
        recorder.flush()
        stats = recorder.stats()
        assert (stats.pending, stats.dropped, stats.failed) == (0, 0, 0), stats
        assert RequestLog.objects.count() == self.sent == stats.written


@pytest.fixture
def sender(site: Any, client: Any) -> Sender:
    return Sender(client)


@hostile(max_examples=120)
@given(exchange=exchanges())
def test_generated_messages_get_spec_shaped_answers_and_are_all_recorded(sender, exchange):
    body, headers = exchange

    sender.post(body, headers)

    sender.assert_every_request_recorded()


@hostile(max_examples=50)
@given(body=raw_bodies, origin=st.sampled_from([None, "https://evil.example", "null"]))
def test_raw_bytes_get_spec_shaped_refusals_and_are_all_recorded(sender, body, origin):
    headers = {"Origin": origin} if origin else {}

    sender.post(body, headers)

    sender.assert_every_request_recorded()


@hostile(max_examples=20)
@given(batch=st.lists(exchanges(), min_size=2, max_size=6))
def test_a_burst_with_hostile_requests_loses_no_record(sender, batch):
    """Several requests per flush: one bad record must not cost its batch neighbours."""
    for body, headers in batch:
        sender.post(body, headers)

    sender.assert_every_request_recorded()
