"""A failure inside admission itself, on Django's own paths, answered in the protocol's shape.

Django answers an exception raised by a middleware's ``process_view`` with its HTML 500
page (``process_exception`` only sees the view's own): a rate limit's cache server that is
down, or a bug in django-mcp before the view. basic/index.mdx, "Error Codes": an internal
error is -32603; the native paths already answered it so (a JSON-RPC error with status
500, no id: the message was not admitted). These tests pin Django's sync and async paths
to the same answer, the report Django would make on ``django.request``, and the record.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any
from unittest import mock

import httpx
import pytest
from asgiref.sync import async_to_sync
from django.core.asgi import get_asgi_application
from django.core.cache.backends.base import BaseCache
from django.core.signals import got_request_exception
from django.test import AsyncClient, Client, override_settings

from django_mcp.http.native import NativeMCP
from django_mcp.protocol.errors import INTERNAL_ERROR
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.sites import MCPSite
from tests.helpers import assert_error, mcp_body, mcp_headers, mcp_post, override_mcp


class CacheServerDown(BaseCache):
    """A cache whose server cannot be reached: every call raises, as a Redis client's
    ``ConnectionError`` does when nothing listens."""

    def __init__(self, location: str, params: dict[str, Any]) -> None:
        super().__init__(params)

    def _down(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("Error 111 connecting to cache.internal.example:6379.")

    add = get = set = incr = delete = touch = _down


CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "down": {"BACKEND": f"{__name__}.CacheServerDown"},
}


@pytest.fixture
def validate_exchange() -> Any:
    """These answers are 500s, which conftest's check refuses for every other test (the one
    5xx by design there is a refused listen stream); :func:`assert_internal_error` checks
    them instead."""
    return lambda response, info: None


@pytest.fixture
def site(mcp_site: MCPSite) -> MCPSite:
    @mcp_site.tool()
    def hello() -> str:
        return "hello"

    return mcp_site


def assert_internal_error(response: Any) -> None:
    """-32603 with status 500 and no id (nothing was admitted: the schema's
    ``JSONRPCErrorResponse`` then leaves ``id`` out), and no word of the cause."""
    assert response["Content-Type"].startswith("application/json")
    error = assert_error(response, 500, INTERNAL_ERROR)
    assert set(response.json()) == {"jsonrpc", "error"}
    assert "cache.internal.example" not in json.dumps(error)


def recorded() -> list[tuple[int, int | None]]:
    recorder.flush()
    return list(RequestLog.objects.values_list("http_status", "error_code"))


def test_a_rate_limit_cache_that_is_down_is_an_internal_error_not_an_html_page(site, db, caplog):
    """The rate limits count in ``RATE_LIMIT_CACHE`` during admission (sync path): a cache
    server that is down used to give Django's HTML 500 page, which no MCP client reads."""
    client = Client(raise_request_exception=False)
    with (
        override_settings(CACHES=CACHES),
        override_mcp(RATE_LIMIT_IP="100/m", RATE_LIMIT_CACHE="down"),
    ):
        response = mcp_post(client, "tools/list")
    assert_internal_error(response)
    (reported,) = [r for r in caplog.records if r.name == "django.request"]
    assert reported.levelname == "ERROR"
    assert reported.exc_info is not None
    assert recorded() == [(500, INTERNAL_ERROR)]


def test_a_bug_before_admission_on_the_async_path_is_an_internal_error(site, db):
    """Under ASGI the middleware admits on the event loop (``aprocess_view``) when
    admission needs no database: a bug there is answered -32603 too, and recorded."""
    body = mcp_body("tools/list", {})
    broken = mock.patch(
        "django_mcp.http.middleware.origin_allowed", side_effect=RuntimeError("a bug")
    )

    async def post() -> Any:
        return await AsyncClient(raise_request_exception=False).post(
            "/mcp",
            json.dumps(body),
            content_type="application/json",
            headers={**mcp_headers(body), "Origin": "http://localhost"},
        )

    with broken:
        response = async_to_sync(post)()
    assert_internal_error(response)
    assert recorded() == [(500, INTERNAL_ERROR)]


def test_a_bug_before_admission_on_the_sync_path_is_an_internal_error(site, db):
    client = Client(raise_request_exception=False)
    with mock.patch("django_mcp.server.dispatch.MCPServer.admit", side_effect=RuntimeError("bug")):
        response = mcp_post(client, "tools/list")
    assert_internal_error(response)
    assert recorded() == [(500, INTERNAL_ERROR)]


@pytest.fixture
def report_threads() -> Iterator[list[bool]]:
    """Whether each ``got_request_exception`` receiver ran on an event loop."""
    on_loop: list[bool] = []

    def receiver(**kwargs: Any) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            on_loop.append(False)
        else:
            on_loop.append(True)

    got_request_exception.connect(receiver)
    yield on_loop
    got_request_exception.disconnect(receiver)


@pytest.mark.parametrize("path", ["django", "native"])
def test_a_failure_is_reported_off_the_event_loop(site, db, report_threads, path):
    """Django reports an unhandled exception under ASGI in a thread
    (``response_for_exception`` through ``sync_to_async``): its receivers and log handlers
    (``AdminEmailHandler`` sends mail) may block or query the database. The answer to a
    failure of admission was reported on the loop itself, on Django's async path (a
    hostile review's finding) and on the native path."""
    body = mcp_body("tools/list", {})
    broken = mock.patch(
        "django_mcp.http.middleware.origin_allowed", side_effect=RuntimeError("a bug")
    )

    async def post() -> Any:
        if path == "django":
            return await AsyncClient(raise_request_exception=False).post(
                "/mcp",
                json.dumps(body),
                content_type="application/json",
                headers={**mcp_headers(body), "Origin": "http://localhost"},
            )
        app = NativeMCP(get_asgi_application())
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            return await http.post(
                "/mcp",
                content=json.dumps(body),
                headers={
                    **mcp_headers(body),
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    "Origin": "http://localhost",
                },
            )

    with broken:
        response = async_to_sync(post)()
    assert response.status_code == 500
    assert report_threads == [False]
