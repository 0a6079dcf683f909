"""What the native-path tests share (tests/http/test_native.py for ASGI,
tests/http/test_native_wsgi.py for WSGI): a project middleware that stamps what Django's
handler served, a plain view, MCP request builders, the error check, what a tool sees of
Django's view framing, and the same exchanges recorded the same way on every path."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from django.db import OperationalError, connection, connections, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import get_urlconf

from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.server.context import Context
from tests.helpers import mcp_body, mcp_headers, override_mcp, request_meta

STAMP = "X-Project-Middleware"


class StampMiddleware:
    """A project middleware: it marks every response Django's handler served."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response[STAMP] = "ran"
        return response


def plain(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"path": request.path, "method": request.method})


def routing_facts(ctx: Context) -> dict[str, Any]:
    """What Django's handler sets up for a view, as a tool sees it: the route, the
    URLconf, and whether it runs in a transaction."""
    assert ctx.request is not None
    match = ctx.request.resolver_match
    return {
        "view_name": match.view_name if match is not None else None,
        "urlconf": get_urlconf(),
        "atomic": connection.in_atomic_block,
    }


def mcp(
    method: str, params: dict[str, Any] | None = None, *, meta: Any = None, **headers: str
) -> dict[str, Any]:
    """An httpx request for one MCP message, its headers mirrored, ``headers`` on top."""
    body = mcp_body(method, params, meta=meta)
    return {"content": json.dumps(body), "headers": {**mcp_headers(body), **headers}}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return mcp("tools/call", {"name": name, "arguments": arguments})


def error(response: httpx.Response, status: int, code: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    found: dict[str, Any] = response.json()["error"]
    assert found["code"] == code, found
    return found


def assert_every_exchange_recorded(exchange: Callable[..., Any], app: Any) -> None:
    """Five exchanges (a call, a tool error, a header mismatch, a GET, an oversized body)
    through ``exchange(app, *requests)`` leave one request-log row each, with the facts
    every path records the same."""
    with override_mcp(MAX_REQUEST_BYTES=4096):
        exchange(
            app,
            call("add", a=2, b=2),
            call("add", a="two", b=2),
            mcp("tools/list", **{"Mcp-Method": "prompts/list"}),
            {"method": "GET"},
            {"content": "x" * 5000, "headers": {"Content-Type": "application/json"}},
        )
    recorder.flush()
    rows = list(
        RequestLog.objects.order_by("id").values_list(
            "method", "target", "outcome", "error_code", "http_status", "client_name"
        )
    )
    assert rows == [
        ("tools/call", "add", "ok", None, 200, "pytest"),
        ("tools/call", "add", "tool_error", None, 200, "pytest"),
        ("tools/list", "", "protocol_error", -32020, 400, "pytest"),
        ("", "", "protocol_error", None, 405, ""),
        ("", "", "protocol_error", -32600, 413, ""),
    ]
    assert set(RequestLog.objects.values_list("remote_addr", flat=True)) == {"127.0.0.1"}


def assert_protocol_errors_answered(exchange: Callable[..., Any], app: Any) -> None:
    """-32020 (a header that disagrees with the body), -32022 (an unsupported revision),
    -32021 (a required client capability missing: the site's ``only_as_task`` tool),
    -32601 (an unknown method), each with its HTTP status."""
    mismatch, revision, capability, unknown = exchange(
        app,
        mcp("tools/list", **{"Mcp-Method": "prompts/list"}),
        mcp("tools/list", meta=request_meta(version="1999-01-01")),
        call("only_as_task"),
        mcp("no/such/method"),
    )
    error(mismatch, 400, -32020)
    assert error(revision, 400, -32022)["data"]["requested"] == "1999-01-01"
    error(capability, 400, -32021)
    error(unknown, 404, -32601)


def assert_a_failed_view_transaction_is_an_internal_error(
    exchange: Callable[..., Any], app: Any
) -> None:
    """With ``ATOMIC_REQUESTS`` the view's transaction opens before the view runs; when
    that fails (the database down), the admitted request is answered as any internal error:
    -32603 with its id, HTTP 200, and recorded so (docs/deployment.md, "When the database
    is down"; basic/index.mdx, JSON-RPC errors carry the request's id)."""

    def unreachable(self: transaction.Atomic) -> None:
        raise OperationalError("connection to server at db.internal.example failed")

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", True)
        patch.setattr(transaction.Atomic, "__enter__", unreachable)
        (response,) = exchange(app, call("add", a=1, b=2))
    error(response, 200, -32603)
    assert response.json()["id"] == 1
    recorder.flush()
    assert list(RequestLog.objects.values_list("target", "error_code", "http_status")) == [
        ("add", -32603, 200)
    ]
