"""The error-code allocation policy, walked over the catalogue and over HTTP.

basic/index.mdx, "Error Codes": -32000..-32019 are legacy ("New codes MUST NOT be allocated
in this sub-range"), -32020..-32099 are reserved for the MCP specification
("Implementations MUST NOT emit any code from this sub-range that is not defined by this
specification"), -32002 and -32042 MUST NOT be emitted.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.test import Client, override_settings

from django_mcp import Context, MCPHeader
from django_mcp.auth.models import AccessToken
from django_mcp.http.responses import STATUS_BY_ERROR
from django_mcp.protocol import errors
from tests.helpers import (
    OMIT,
    VERSION_KEY,
    RequestInfo,
    assert_error,
    call_tool,
    mcp_post,
    override_mcp,
    post_raw,
    request_meta,
    validate_mcp_response,
)

SPEC_CODES = {-32020, -32021, -32022}


def catalogue_status(cls: type[errors.MCPError]) -> int:
    """The HTTP status the one status table gives an error class (nearest listed ancestor)."""
    for klass in cls.__mro__:
        if klass in STATUS_BY_ERROR:
            return STATUS_BY_ERROR[klass]
    return 200


@pytest.mark.parametrize("cls", errors.ERROR_CLASSES, ids=lambda c: c.__name__)
def test_every_error_class_uses_an_allowed_code(cls):
    assert errors.is_allowed_code(cls.code)
    assert not errors.is_implementation_defined(cls.code)
    if errors.is_spec_reserved(cls.code):
        assert cls.code in SPEC_CODES
    assert cls.code not in errors.FORBIDDEN_CODES


def test_the_spec_reserved_codes_are_exactly_the_three_the_spec_defines():
    assert errors.SPEC_DEFINED_CODES == SPEC_CODES
    reserved = {c.code for c in errors.ERROR_CLASSES if errors.is_spec_reserved(c.code)}
    assert reserved == SPEC_CODES


def test_error_classes_lists_every_concrete_error_class():
    def subclasses(cls: type[errors.MCPError]) -> set[type[errors.MCPError]]:
        found = set(cls.__subclasses__())
        for sub in list(found):
            found |= subclasses(sub)
        return found

    in_module = {c for c in subclasses(errors.MCPError) if c.__module__ == errors.__name__}
    assert in_module == set(errors.ERROR_CLASSES)


@pytest.mark.parametrize(
    ("code", "allowed"),
    [
        (-32700, True),
        (-32600, True),
        (-32601, True),
        (-32602, True),
        (-32603, True),
        (-32020, True),
        (-32021, True),
        (-32022, True),
        (-32023, False),
        (-32099, False),
        (-32000, False),
        (-32019, False),
        (-32002, False),
        (-32042, False),
        (-32001, False),
        (-32604, False),
        (-32768, False),
        (-32769, True),
        (-31999, True),
        (1, True),
        (0, True),
    ],
)
def test_is_allowed_code(code, allowed):
    assert errors.is_allowed_code(code) is allowed


def test_range_predicates():
    assert errors.is_implementation_defined(-32000)
    assert errors.is_implementation_defined(-32019)
    assert not errors.is_implementation_defined(-32020)
    assert errors.is_spec_reserved(-32020)
    assert errors.is_spec_reserved(-32099)
    assert not errors.is_spec_reserved(-32100)
    assert not errors.is_spec_reserved(-32019)


def test_error_data_is_omitted_unless_given():
    assert errors.MethodNotFound().to_dict() == {"code": -32601, "message": "Method not found"}
    assert errors.ResourceNotFound("x://y").to_dict()["data"] == {"uri": "x://y"}
    required = errors.MissingRequiredClientCapability({"elicitation": {}})
    assert required.data == {"requiredCapabilities": {"elicitation": {}}}


# -- the walk over HTTP --------------------------------------------------------------------


@pytest.fixture
def walk_site(mcp_site):
    @mcp_site.tool
    def regional(region: Annotated[str, MCPHeader("Region")]) -> str:
        return region

    @mcp_site.tool
    def explode() -> str:
        raise RuntimeError("boom")

    @mcp_site.tool
    def ask(ctx: Context) -> str:
        return ctx.elicit("Name?", {"name": str}).action

    @mcp_site.tool
    def listed() -> str:
        return "ok"

    @mcp_site.tool
    def listed_too() -> str:
        return "ok"

    @mcp_site.resource("test://known")
    def known() -> str:
        return "hello"

    @mcp_site.tool(scopes_required="walk:write")
    def scoped() -> str:
        return "ok"

    return mcp_site


@pytest.fixture
def validate_exchange(mcp_log: Any) -> Any:
    """conftest's check, which here also takes the one 500 the walk provokes on purpose
    (a rate limit's cache server down): -32603 without an id, checked against the schema."""

    def validate(response: Any, info: RequestInfo) -> None:
        mcp_log.exchanges.append(validate_mcp_response(response, info, server_failure=True))

    return validate


class CacheServerDown(BaseCache):
    """A cache whose server cannot be reached: every call raises, as a Redis client does."""

    def __init__(self, location: str, params: dict[str, Any]) -> None:
        super().__init__(params)

    def _down(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("Error 111 connecting to cache.internal.example:6379.")

    add = get = set = incr = delete = touch = _down


#: The one (code, status) pair outside the status table: the server failing before it
#: read the request (InternalError's table status, 200, is for an admitted request, whose
#: id is known), as with a rate limit's cache server down (docs/security.md).
SERVER_FAILURE = (errors.INTERNAL_ERROR, 500)


def provoke(client: Any) -> list[tuple[str, Any, int, int]]:
    """Every error path the server can emit, as (label, response, status, code)."""
    cases: list[tuple[str, Any, int, int]] = []

    def add(label: str, response: Any, status: int, code: int) -> None:
        cases.append((label, response, status, code))

    discover = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    add("parse error", post_raw(client, b"{", discover), 400, -32700)
    add("invalid utf-8", post_raw(client, b'{"a":"\xff"}', discover), 400, -32700)
    add("batch", post_raw(client, "[]", discover), 400, -32600)
    add(
        "client response",
        post_raw(client, json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}), discover),
        400,
        -32600,
    )
    add(
        "wrong jsonrpc",
        post_raw(client, json.dumps({"jsonrpc": "1.0", "id": 1, "method": "x"}), discover),
        400,
        -32600,
    )
    add(
        "null id",
        post_raw(client, json.dumps({"jsonrpc": "2.0", "id": None, "method": "x"}), discover),
        400,
        -32600,
    )
    add("unknown method", mcp_post(client, "nope/nope"), 404, -32601)
    for removed in (
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/list",
        "tasks/result",
    ):
        add(f"removed {removed}", mcp_post(client, removed), 404, -32601)
    add("capability not advertised", mcp_post(client, "prompts/list"), 404, -32601)
    add("missing _meta", mcp_post(client, "server/discover", meta=OMIT), 400, -32602)
    add(
        "missing protocolVersion",
        mcp_post(
            client,
            "server/discover",
            meta=request_meta(**{VERSION_KEY: OMIT}),
            headers={"MCP-Protocol-Version": "2026-07-28"},
        ),
        400,
        -32602,
    )
    add(
        "invalid logLevel",
        mcp_post(
            client,
            "server/discover",
            meta=request_meta(**{"io.modelcontextprotocol/logLevel": "loud"}),
        ),
        400,
        -32602,
    )
    add(
        "version header missing",
        mcp_post(client, "server/discover", headers={"MCP-Protocol-Version": None}),
        400,
        -32020,
    )
    add(
        "version header differs",
        mcp_post(
            client,
            "server/discover",
            meta=request_meta(version="v999.0.0"),
            headers={"MCP-Protocol-Version": "2026-07-28"},
        ),
        400,
        -32020,
    )
    add(
        "method header missing",
        mcp_post(client, "tools/list", headers={"Mcp-Method": None}),
        400,
        -32020,
    )
    add(
        "method header uppercase",
        mcp_post(client, "tools/list", headers={"Mcp-Method": "TOOLS/LIST"}),
        400,
        -32020,
    )
    add(
        "name header differs",
        call_tool(client, "listed", headers={"Mcp-Name": "other"}),
        400,
        -32020,
    )
    add(
        "name header bad base64",
        call_tool(client, "listed", headers={"Mcp-Name": "=?base64?bGlzdGVk!?="}),
        400,
        -32020,
    )
    add(
        "param header missing",
        call_tool(client, "regional", {"region": "eu"}),
        400,
        -32020,
    )
    add(
        "param header differs",
        call_tool(client, "regional", {"region": "eu"}, headers={"Mcp-Param-Region": "us"}),
        400,
        -32020,
    )
    add(
        "unsupported version",
        mcp_post(client, "server/discover", meta=request_meta(version="v999.0.0")),
        400,
        -32022,
    )
    add(
        "older version",
        mcp_post(client, "server/discover", meta=request_meta(version="2025-11-25")),
        400,
        -32022,
    )
    add("unknown tool", call_tool(client, "nope", {}), 200, -32602)
    add(
        "invalid cursor",
        mcp_post(client, "tools/list", {"cursor": "forged"}),
        200,
        -32602,
    )
    add(
        "unknown resource",
        mcp_post(client, "resources/read", {"uri": "test://unknown"}),
        200,
        -32602,
    )
    add("internal error", call_tool(client, "explode", {}), 200, -32603)
    listen = {"notifications": {"toolsListChanged": True}}
    add(
        "listen in a single-threaded WSGI worker",
        mcp_post(client, "subscriptions/listen", listen),
        503,
        -31000,
    )
    with override_mcp(LISTEN_WSGI_STREAMS=2, LISTEN_MAX_STREAMS_PER_CALLER=1):
        threaded = {"wsgi.multithread": True}
        held = mcp_post(client, "subscriptions/listen", listen, **threaded)
        assert held["Content-Type"] == "text/event-stream"
        try:
            again = mcp_post(client, "subscriptions/listen", listen, id=2, **threaded)
            add("listen over the caller's limit", again, 429, -31000)
        finally:
            held.slot.release()  # what closing it does (closing needs a database here)
    add("missing client capability", call_tool(client, "ask", {}), 400, -32021)
    with override_mcp(MAX_REQUEST_BYTES=64):
        add("too large", mcp_post(client, "server/discover"), 413, -32600)
    add(
        "forbidden origin",
        mcp_post(client, "server/discover", headers={"Origin": "https://evil.example.com"}),
        403,
        -32600,
    )
    caches["default"].clear()  # fresh rate-limit counters
    with override_mcp(RATE_LIMIT_IP="1/h"):
        mcp_post(client, "tools/list")
        add("rate limited", mcp_post(client, "tools/list"), 429, errors.RATE_LIMITED)
    caches["default"].clear()
    down = {
        "default": settings.CACHES["default"],
        "down": {"BACKEND": f"{__name__}.CacheServerDown"},
    }
    with override_settings(CACHES=down), override_mcp(RATE_LIMIT_IP="1/h", RATE_LIMIT_CACHE="down"):
        failed = Client(raise_request_exception=False)
        add("rate limit cache down", mcp_post(failed, "tools/list"), 500, -32603)
    add("no credentials for a scoped tool", call_tool(client, "scoped", {}), 401, -32600)
    user = get_user_model().objects.create_user("walker")
    _, token = AccessToken.objects.issue(user, scopes="walk:read")
    bearer = {"Authorization": f"Bearer {token}"}
    add("insufficient scope", call_tool(client, "scoped", {}, headers=bearer), 403, -32600)
    return cases


def test_every_error_path_over_http_emits_an_allowed_code_with_its_status(
    client, walk_site, mcp_log, db
):
    """basic/index.mdx "Error Codes" and basic/transports/streamable-http.mdx: every error
    the server emits uses an allowed code, with the status the spec (or our one status
    table) gives it. Each response was also validated against schema.json by conftest."""
    for label, response, status, code in provoke(client):
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), label
        assert_error(response, status, code)
    for exchange in mcp_log.exchanges:
        # Not the listen stream held open for the 429, nor a result.
        if exchange.message is not None and exchange.error_code is not None:
            assert errors.is_allowed_code(exchange.error_code)


def test_the_codes_seen_over_http_are_exactly_the_catalogue(client, walk_site, mcp_log, db):
    """Adding an error class (or a status for one) without provoking it here fails: the set
    of (code, HTTP status) pairs seen must equal the catalogue's."""
    provoke(client)
    declared = {(cls.code, catalogue_status(cls)) for cls in errors.ERROR_CLASSES}
    assert mcp_log.error_codes == {cls.code for cls in errors.ERROR_CLASSES}
    assert mcp_log.error_statuses == declared | {SERVER_FAILURE}


@pytest.mark.django_db(transaction=True)
def test_the_error_paths_only_stdio_has_emit_allowed_codes(mcp_site):
    """basic/index.mdx, "Error Codes" and "Requests", for what only stdio refuses (HTTP has
    no line to cut short, and every POST answers one request): a line over the size limit,
    and a request under an id still in flight. Each is -32600, a valid
    ``JSONRPCErrorResponse`` carrying the id it answers."""
    import io
    import threading

    from django.contrib.auth.models import AnonymousUser

    from django_mcp.server.dispatch import MCPServer
    from django_mcp.stdio.lines import OversizedLine
    from django_mcp.stdio.transport import StdioServer
    from tests.helpers import assert_valid, mcp_body

    started, release = threading.Event(), threading.Event()

    @mcp_site.tool
    def hold() -> str:
        started.set()
        release.wait(10)
        return "held"

    output = io.BytesIO()
    stdio = StdioServer(MCPServer(mcp_site), output, user=AnonymousUser())

    def lines() -> Any:
        call = mcp_body("tools/call", {"name": "hold", "arguments": {}}, id=1)
        yield json.dumps(call).encode()
        assert started.wait(10)
        yield json.dumps(call).encode()  # id 1 is still in flight
        yield OversizedLine("big")
        release.set()

    stdio.serve(lines())

    refusals = [m for m in map(json.loads, output.getvalue().splitlines()) if "error" in m]
    assert [(m["id"], m["error"]["code"]) for m in refusals] == [(1, -32600), ("big", -32600)]
    for message in refusals:
        assert errors.is_allowed_code(message["error"]["code"])
        assert_valid(message, "JSONRPCErrorResponse")
