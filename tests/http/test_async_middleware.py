"""``MCPMiddleware`` under ASGI: sync and async capable, so Django adapts nothing around it.

Django's ``BaseHandler.adapt_method_mode`` wraps a middleware (or its ``process_view``) that
cannot run in the handler's mode in ``sync_to_async``/``async_to_sync``, a thread hop on
every request of the host project, and logs each adaptation on ``django.request`` at DEBUG
when ``DEBUG`` is on. These tests read that log and probe the thread admission runs on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

import pytest
from django.http import HttpRequest, JsonResponse
from django.test import AsyncClient, override_settings
from django.urls import path

from tests import urls as test_urls
from tests.helpers import PROTOCOL_VERSION, admission_threads, mcp_body, mcp_headers


async def ping(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"thread": threading.get_ident()})


@pytest.fixture
def site_with_ping(mcp_site: Any) -> Any:
    """The fresh MCP site at /mcp, plus a plain async view at /ping in the same URLconf."""

    @mcp_site.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    test_urls.urlpatterns.append(path("ping", ping))
    return mcp_site


def _adaptations(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "adapted" in r.getMessage()]


def _mcp_call(client: AsyncClient, method: str, params: dict[str, Any]) -> Any:
    body = mcp_body(method, params)
    headers = {k: v for k, v in mcp_headers(body).items()}
    return client.post("/mcp", json.dumps(body), content_type="application/json", headers=headers)


def _post_with_a_mismatched_name(tool: str, arguments: dict[str, Any]) -> Any:
    """A ``tools/call`` of ``tool`` under ASGI whose ``Mcp-Name`` header names another."""
    client = AsyncClient()
    body = mcp_body("tools/call", {"name": tool, "arguments": arguments})
    headers = {**mcp_headers(body), "Mcp-Name": "other"}

    async def run() -> Any:
        return await client.post(
            "/mcp", json.dumps(body), content_type="application/json", headers=headers
        )

    return asyncio.run(run())


@pytest.mark.django_db
def test_no_middleware_is_adapted_for_a_non_mcp_async_view(site_with_ping, caplog):
    """A project that adds the middleware keeps a fully async chain: Django logs no
    adaptation for it, and a plain async view runs on the event loop's thread."""
    caplog.set_level(logging.DEBUG, logger="django.request")
    with override_settings(DEBUG=True):
        client = AsyncClient()  # loads the middleware chain on its first request

        async def run() -> tuple[int, Any]:
            response = await client.get("/ping")
            return threading.get_ident(), response

        loop_thread, response = asyncio.run(run())
    assert response.status_code == 200
    assert response.json()["thread"] == loop_thread
    adapted = _adaptations(caplog)
    assert not [message for message in adapted if "MCPMiddleware" in message], adapted


@pytest.mark.django_db
def test_mcp_admission_runs_on_the_event_loop_without_a_thread_hop(
    site_with_ping, caplog, monkeypatch
):
    """basic/transports/streamable-http.mdx: every POST is admitted (headers against body)
    before dispatch; under ASGI that admission runs on the loop for an ungated site."""
    seen = admission_threads(monkeypatch)
    caplog.set_level(logging.DEBUG, logger="django.request")
    with override_settings(DEBUG=True):
        client = AsyncClient()

        async def run() -> tuple[int, Any]:
            response = await _mcp_call(
                client, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}
            )
            return threading.get_ident(), response

        loop_thread, response = asyncio.run(run())
    assert response.status_code == 200
    assert response.json()["result"]["structuredContent"] == 5
    assert seen == [loop_thread]
    assert not [m for m in _adaptations(caplog) if "MCPMiddleware" in m]


@pytest.mark.django_db
def test_a_rejection_under_asgi_is_answered_by_the_middleware(site_with_ping):
    """basic/transports/streamable-http.mdx: a header that disagrees with the body is
    -32020 with HTTP 400, decided before the view runs (here on the event loop)."""
    response = _post_with_a_mismatched_name("add", {"a": 1, "b": 1})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


@pytest.mark.django_db
def test_a_gated_site_admits_in_a_thread_because_permissions_may_query_the_database(
    mcp_site, monkeypatch
):
    """Permission checks (``user.has_perms``) may query the database, which Django forbids
    on the event loop; a site whose declarations are gated admits off the loop."""

    @mcp_site.tool(permission=lambda ctx: True)
    def gated() -> str:
        return "ok"

    seen = admission_threads(monkeypatch)
    client = AsyncClient()

    async def run() -> tuple[int, Any]:
        response = await _mcp_call(client, "tools/call", {"name": "gated", "arguments": {}})
        return threading.get_ident(), response

    loop_thread, response = asyncio.run(run())
    assert response.status_code == 200, response.content
    assert response.json()["result"]["content"][0]["text"] == "ok"
    assert len(seen) == 1
    assert seen[0] != loop_thread


@pytest.mark.django_db
def test_the_view_without_the_middleware_answers_500_with_a_json_rpc_error(
    site_with_ping, settings, client, caplog
):
    """ADR 0004: routed without MCPMiddleware the view cannot know the request was
    admitted, so it serves nothing: 500, a JSON-RPC internal error, and an error log."""
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if "MCPMiddleware" not in m]
    body = mcp_body("tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    with caplog.at_level(logging.ERROR, logger="django_mcp"):
        response = client.post(
            "/mcp", json.dumps(body), content_type="application/json", headers=mcp_headers(body)
        )
    assert response.status_code == 500
    assert response.json()["error"]["code"] == -32603
    assert "MCPMiddleware" in caplog.text
    assert PROTOCOL_VERSION  # the request itself was well formed


def sync_ping(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


def _count_thread_hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every ``sync_to_async`` call made from now on (each one a hop to a thread)."""
    from asgiref.sync import SyncToAsync

    hops: list[str] = []
    original = SyncToAsync.__call__

    async def counting(self: SyncToAsync[Any, Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counting)
    return hops


@pytest.mark.django_db
def test_a_gated_site_admits_in_the_views_thread_with_no_extra_hop(mcp_site, monkeypatch):
    """A gated site's admission may query the database, so under ASGI it runs off the loop,
    but in the thread Django runs the sync view in: an MCP request makes no more thread
    hops than a plain sync Django view (each hop costs tens of microseconds of CPU).
    basic/transports/streamable-http.mdx: the request is still admitted before dispatch."""

    @mcp_site.tool(permission=lambda ctx: True)
    def gated() -> int:
        return threading.get_ident()

    test_urls.urlpatterns.append(path("sync-ping", sync_ping))
    seen = admission_threads(monkeypatch)
    client = AsyncClient()

    async def run() -> tuple[Any, Any]:
        await client.get("/sync-ping")  # builds the middleware chain before counting
        plain_hops = _count_thread_hops(monkeypatch)
        await client.get("/sync-ping")
        plain = list(plain_hops)
        plain_hops.clear()
        response = await _mcp_call(client, "tools/call", {"name": "gated", "arguments": {}})
        return (plain, list(plain_hops)), response

    (plain, mcp), response = asyncio.run(run())
    assert response.status_code == 200, response.content
    assert response.json()["result"]["structuredContent"] == seen[0]  # the same thread
    assert len(mcp) == len(plain), (plain, mcp)


@pytest.mark.django_db
def test_a_refusal_deferred_to_the_views_thread_is_answered_and_logged(mcp_site):
    """basic/transports/streamable-http.mdx: a header that disagrees with the body is
    -32020 with HTTP 400. On a gated site under ASGI admission runs at the start of the
    view's thread; its refusal is answered there, the tool never runs, and it is logged."""
    from django_mcp.models import RequestLog
    from django_mcp.requestlog import recorder

    ran: list[bool] = []

    @mcp_site.tool(permission=lambda ctx: True)
    def gated() -> str:
        ran.append(True)
        return "ok"

    response = _post_with_a_mismatched_name("gated", {})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020
    assert ran == []
    recorder.flush()
    logged = RequestLog.objects.get()
    assert (logged.http_status, logged.error_code) == (400, -32020)
