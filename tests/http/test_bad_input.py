"""Hostile and malformed input: never a 500, always a spec-shaped answer.

Every response here is also validated against schema.json by the suite's conftest, so
"spec-shaped" is checked for each case: a JSON-RPC error (or an empty body where the spec
wants one) with an allowed code, the status the spec mandates, and the id echoed when it
was readable (basic/index.mdx "Error Responses"; basic/transports/streamable-http.mdx).
"""

from __future__ import annotations

import json
from typing import Any, Literal
from unittest import mock

import pytest
from django.core.exceptions import DisallowedHost
from django.middleware.common import CommonMiddleware
from django.test import RequestFactory
from django.urls import resolve

from django_mcp.http.body import read_body
from django_mcp.http.exchange import exchange_of
from django_mcp.http.middleware import MCPMiddleware, host_checked_upstream
from django_mcp.protocol.errors import RequestTooLarge
from tests.helpers import (
    CAPABILITIES_KEY,
    OMIT,
    VERSION_KEY,
    assert_error,
    call_tool,
    mcp_body,
    mcp_headers,
    mcp_post,
    override_mcp,
    post_raw,
    request_meta,
    result_of,
)

DISCOVER_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}


@pytest.fixture
def site(mcp_site):
    @mcp_site.tool
    def echo(payload: Any = None) -> str:
        return json.dumps(payload)[:50]

    @mcp_site.tool
    def one() -> str:
        return "one"

    @mcp_site.tool
    def two() -> str:
        return "two"

    @mcp_site.prompt
    def greet(name: str, tone: Literal["warm", "dry"] = "warm") -> str:
        return f"Hello {name} ({tone})"

    @mcp_site.resource("test://doc")
    def doc() -> str:
        return "doc"

    return mcp_site


# -- bodies ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b" ",
        b"{",
        b"}",
        b"nul",
        b"{'jsonrpc': '2.0'}",
        b'{"jsonrpc":"2.0","id":1,"method":"server/discover",}',
        b"\xff\xfe\x00{",
        b'{"jsonrpc":"2.0","id":"\xc3\x28","method":"server/discover"}',
        b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":NaN}}',
        b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":-Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":1e999}}',
        "\ufeff{}".encode(),
        b"[" * 100_000,
        b'{"a":' * 100_000,
        b"9" * 10_000,
    ],
    ids=lambda body: repr(body[:24]),
)
def test_bodies_that_are_not_json_are_400_parse_errors(client, body):
    """docs/errors.md, "Where each error comes from", step 4: body is not JSON -> 400 -32700
    (no id); NaN/Infinity are not JSON, and a nesting bomb must not take the worker down."""
    response = post_raw(client, body, DISCOVER_HEADERS)
    assert_error(response, 400, -32700)
    assert "id" not in response.json()


@pytest.mark.parametrize("body", [b"1", b'"x"', b"null", b"true", b"[]", b"[1]"])
def test_json_that_is_not_one_object_is_400_invalid_request(client, body):
    """streamable-http.mdx: the body MUST be a single JSON-RPC request or notification."""
    assert_error(post_raw(client, body, DISCOVER_HEADERS), 400, -32600)


def test_the_content_type_is_not_enforced(client):
    """basic/transports/streamable-http.mdx defines no status for a wrong Content-Type; our
    choice is to be lenient and parse JSON regardless of Content-Type."""
    body = json.dumps(mcp_body("server/discover"))
    response = post_raw(client, body, DISCOVER_HEADERS, content_type="text/plain")
    assert result_of(response)["resultType"] == "complete"


def test_a_deep_but_parseable_argument_does_not_crash_the_server(client, site):
    """Nested JSON just under the parser's limit must still give a JSON-RPC answer: -32600
    under the default MAX_JSON_DEPTH, and a result when the setting allows the depth."""
    deep: Any = "x"
    for _ in range(900):
        deep = [deep]
    assert_error(call_tool(client, "echo", {"payload": deep}), 400, -32600)
    with override_mcp(MAX_JSON_DEPTH=1000):
        response = call_tool(client, "echo", {"payload": deep})
    assert response.status_code == 200


def test_a_lone_surrogate_in_the_id_is_echoed_as_valid_json(client):
    """basic/index.mdx: error responses include the same id; the response must stay UTF-8
    JSON even when that id holds an escaped lone surrogate."""
    body = '{"jsonrpc":"2.0","id":"\\ud800","method":"server/discover","params":{"_meta":{}}}'
    response = post_raw(client, body, DISCOVER_HEADERS)
    assert_error(response, 400, -32602)
    assert response.json()["id"] == "\ud800"


# -- wrong types in every field -----------------------------------------------------------------


def _with(document: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    document = json.loads(json.dumps(document))
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is OMIT:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    return document


META = ("params", "_meta")
CASES: list[tuple[str, tuple[str, ...], Any, int, int]] = [
    *[("server/discover", ("jsonrpc",), v, 400, -32600) for v in (2, 2.0, None, [], "2.00")],
    *[("server/discover", ("id",), v, 400, -32600) for v in (None, True, 1.5, [], {})],
    *[("server/discover", ("method",), v, 400, -32600) for v in (1, None, [], {}, "")],
    *[("server/discover", ("params",), v, 400, -32600) for v in ([], "x", 1, True)],
    *[("server/discover", META, v, 400, -32602) for v in ([], "x", 1, None, True)],
    *[("server/discover", (*META, VERSION_KEY), v, 400, -32602) for v in (1, None, [], {}, True)],
    *[
        ("server/discover", (*META, CAPABILITIES_KEY), v, 400, -32602)
        for v in ([], "x", 1, None, True)
    ],
    *[
        ("server/discover", (*META, "io.modelcontextprotocol/clientInfo"), v, 400, -32602)
        for v in ("x", [], 1, {"name": 1, "version": "1"}, {"name": "n"})
    ],
    *[
        ("server/discover", (*META, "io.modelcontextprotocol/logLevel"), v, 400, -32602)
        for v in (1, "LOUD", [], {}, True)
    ],
    *[("server/discover", (*META, "progressToken"), v, 400, -32602) for v in (1.5, True, [], {})],
    *[("tools/call", ("params", "name"), v, 200, -32602) for v in (1, None, [], {}, OMIT)],
    *[("tools/call", ("params", "arguments"), v, 200, -32602) for v in ([], "x", 1, True)],
    *[("tools/list", ("params", "cursor"), v, 200, -32602) for v in (1, [], {}, "", "junk")],
    *[("resources/read", ("params", "uri"), v, 200, -32602) for v in (1, None, [], OMIT)],
    *[("prompts/get", ("params", "name"), v, 200, -32602) for v in (1, None, [], OMIT)],
    *[("prompts/get", ("params", "arguments"), v, 200, -32602) for v in ([], "x", 1)],
]
BASE_PARAMS = {
    "tools/call": {"name": "one", "arguments": {}},
    "resources/read": {"uri": "test://doc"},
    "prompts/get": {"name": "greet", "arguments": {"name": "Ada"}},
}


@pytest.mark.parametrize(
    ("method", "path", "value", "status", "code"),
    CASES,
    ids=[f"{m}:{'.'.join(p[-1:])}={v!r}" for m, p, v, _, _ in CASES],
)
def test_a_wrong_type_in_any_field_gets_its_json_rpc_error(
    client, site, method, path, value, status, code
):
    """basic/index.mdx "Messages" and "_meta", schema.json request types: jsonrpc, id and
    method shape errors are -32600 (400); a malformed _meta is -32602 with 400; params that
    break the request schema (name, arguments, cursor, uri) are -32602."""
    document = _with(mcp_body(method, BASE_PARAMS.get(method)), path, value)
    headers = mcp_headers(mcp_body(method, BASE_PARAMS.get(method)))
    if path == ("params", "name") or path == ("params", "uri"):
        headers.pop("Mcp-Name", None)
    assert_error(post_raw(client, json.dumps(document), headers), status, code)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"ref": "x", "argument": {"name": "tone", "value": ""}}, -32602),
        ({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": "tone"}, -32602),
        ({"ref": {"type": "ref/prompt", "name": "greet"}}, -32602),
        (
            {"ref": {"type": "ref/prompt", "name": 5}, "argument": {"name": "t", "value": ""}},
            -32602,
        ),
        ({"ref": {"type": "ref/nope"}, "argument": {"name": "tone", "value": ""}}, -32602),
        (
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "tone", "value": ""},
                "context": {"arguments": {"name": 1}},
            },
            -32602,
        ),
        (
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "tone", "value": ""},
                "context": "x",
            },
            -32602,
        ),
    ],
)
def test_malformed_completion_requests_are_invalid_params(client, site, params, expected):
    """server/utilities/completion.mdx: -32602 for invalid prompt names or arguments."""
    assert mcp_post(client, "completion/complete", params).json()["error"]["code"] == expected


def test_completion_still_works_for_a_good_request(client, site):
    params = {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "tone", "value": "w"},
    }
    assert result_of(mcp_post(client, "completion/complete", params))["completion"]["values"] == [
        "warm"
    ]


@pytest.mark.parametrize(
    "extra",
    [
        {"inputResponses": []},
        {"inputResponses": "x"},
        {"requestState": 5},
        {"requestState": "forged"},
        {"requestState": ""},
        {"requestState": None},
    ],
)
def test_malformed_retry_fields_are_invalid_params(client, site, extra):
    """basic/patterns/mrtr.mdx: requestState is attacker-controlled; a state that fails
    verification or malformed InputResponses get a JSON-RPC error (-32602, our choice of
    code). schema.json types requestState as a string: null is no state, not "absent"
    (taken as absent, it silently restarted the rounds the client meant to continue)."""
    response = mcp_post(client, "tools/call", {"name": "one", "arguments": {}, **extra})
    assert_error(response, 200, -32602)


def test_a_null_id_is_refused_without_an_id(client):
    """basic/index.mdx: "Unlike base JSON-RPC, the ID MUST NOT be null." """
    response = mcp_post(client, "server/discover", id=None)
    assert_error(response, 400, -32600)
    assert "id" not in response.json()


def test_null_arguments_mean_no_arguments(client, site):
    """schema.json CallToolRequestParams: arguments is optional."""
    assert result_of(call_tool(client, "one", None))["content"][0]["text"] == "one"
    response = mcp_post(client, "tools/call", {"name": "one", "arguments": None})
    assert result_of(response)["content"][0]["text"] == "one"


def test_unknown_meta_keys_and_params_are_ignored(client):
    """basic/index.mdx "_meta": implementations MUST NOT make assumptions about values at
    reserved keys they do not understand; unknown keys are ignored."""
    meta = request_meta(
        **{
            "io.modelcontextprotocol/somethingNew": {"deep": [1, 2]},
            "dev.mcp/x": None,
            "com.example/trace": "t",
            "notAKey!": 1,
        }
    )
    response = mcp_post(client, "server/discover", {"unexpected": True}, meta=meta)
    assert result_of(response)["resultType"] == "complete"


# -- size ------------------------------------------------------------------------------------


def test_a_body_over_max_request_bytes_is_413(client):
    """The size limit (DJANGO_MCP MAX_REQUEST_BYTES) is enforced before parsing."""
    with override_mcp(MAX_REQUEST_BYTES=100):
        response = mcp_post(client, "server/discover", {"padding": "x" * 200})
    assert_error(response, 413, -32600)


def test_a_body_at_the_limit_is_served(client):
    body = json.dumps(mcp_body("server/discover")).encode()
    with override_mcp(MAX_REQUEST_BYTES=len(body)):
        response = post_raw(client, body, DISCOVER_HEADERS)
    assert result_of(response)["resultType"] == "complete"


def test_a_notification_over_the_limit_is_413(client):
    with override_mcp(MAX_REQUEST_BYTES=10):
        response = post_raw(client, json.dumps({"jsonrpc": "2.0", "method": "notifications/x"}))
    assert response.status_code == 413


def test_read_body_refuses_a_body_already_read_by_other_middleware_if_too_large():
    request = RequestFactory().post("/mcp", b"x" * 50, content_type="application/json")
    assert request.body == b"x" * 50  # as if another middleware had read it
    with pytest.raises(RequestTooLarge):
        read_body(request, 49)
    assert read_body(request, 50) == b"x" * 50


def test_read_body_refuses_a_declared_length_over_the_limit_without_reading():
    request = RequestFactory().post("/mcp", b"{}", content_type="application/json")
    request.META["CONTENT_LENGTH"] = "999999"
    with pytest.raises(RequestTooLarge):
        read_body(request, 100)
    request.META["CONTENT_LENGTH"] = "garbage"
    assert read_body(request, 100) == b"{}"


# -- headers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Mcp-Method": "server/discover\r\nX-Injected: 1"},
        {"Mcp-Method": "server/discover\n"},
        {"Mcp-Method": "server/discover\x00"},
        {"Mcp-Method": "server/discovér"},
        {"MCP-Protocol-Version": "2026-07-28\r\n"},
        {"MCP-Protocol-Version": "2026-07-28\u00a0"},
    ],
)
def test_control_characters_or_non_ascii_in_header_values_are_400_header_mismatch(client, headers):
    """streamable-http.mdx "Server Validation": "A header value contains invalid characters"
    is a validation failure (400, -32020). The test client passes the raw value through the
    WSGI environ as a server would."""
    assert_error(mcp_post(client, "server/discover", headers=headers), 400, -32020)


@pytest.mark.parametrize(
    "name",
    ["one\r\nX-Injected: 1", "one\n", "ońe", "one\x7f"],
)
def test_control_characters_or_non_ascii_in_mcp_name_are_400_header_mismatch(client, site, name):
    """streamable-http.mdx "Value Encoding": such values must be base64 encoded; a plain
    value with invalid characters is rejected (400, -32020)."""
    assert_error(call_tool(client, "one", {}, headers={"Mcp-Name": name}), 400, -32020)


def test_a_header_value_the_wsgi_server_decoded_as_latin1_is_refused(client, site):
    """PEP 3333 hands header bytes to Django as latin-1 text: UTF-8 "é" arrives as "Ã©"."""
    environ_value = "oné".encode().decode("latin-1")
    response = call_tool(client, "one", {}, headers={"Mcp-Name": environ_value})
    assert_error(response, 400, -32020)


@pytest.mark.parametrize(
    "headers",
    [
        {"Mcp-Method": "server/discover, server/discover"},
        {"Mcp-Method": "server/discover,server/discover"},
        {"MCP-Protocol-Version": "2026-07-28, 2026-07-28"},
    ],
)
def test_duplicated_headers_joined_by_the_server_are_a_mismatch(client, headers):
    """RFC 9110 5.3: a recipient may combine repeated fields with commas; the combined value
    no longer equals the body value, so it is a header mismatch (400, -32020)."""
    assert_error(mcp_post(client, "server/discover", headers=headers), 400, -32020)


def test_duplicated_mcp_name_joined_by_the_server_is_a_mismatch(client, site):
    assert_error(call_tool(client, "one", {}, headers={"Mcp-Name": "one, one"}), 400, -32020)


# -- Origin and Host ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example.com",
        "http://evil.example.com:8000",
        "null",
        "file://",
        "http://",
        "http://localhost:notaport",
        "javascript:alert(1)",
        "https://testserver.evil.example.com",
        "http://127.evil.example.com",
        "http://127.0.0.1.evil.example.com:8000",
        "http://localhost.evil.example.com",
        # RFC 6454 6.1: an origin has no userinfo, path, query or fragment; urlsplit reads
        # the host after the last "@", so these would otherwise count as loopback.
        "http://user@evil@localhost",
        "http://evil.example.com@localhost",
        "http://evil.example.com\\@localhost",
        "http://localhost/evil",
        "http://localhost?evil",
        "http://localhost#evil",
    ],
)
def test_a_disallowed_origin_is_403(client, origin):
    """streamable-http.mdx "Security & Endpoint": "Servers MUST validate the Origin header
    on all incoming connections ... If the Origin header is present and invalid, servers MUST
    respond with HTTP 403 Forbidden." """
    response = mcp_post(client, "server/discover", headers={"Origin": origin})
    assert_error(response, 403, -32600)
    assert "id" not in response.json()


def test_a_disallowed_origin_on_a_notification_is_403_without_id(client):
    response = post_raw(
        client,
        json.dumps({"jsonrpc": "2.0", "method": "notifications/x"}),
        {"Origin": "https://evil.example.com"},
    )
    assert response.status_code == 403


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:8000",
        "http://localhost",
        "http://127.0.0.1:3000",
        "http://[::1]:6274",
        "http://127.0.0.2:8000",
        "https://localhost",
        "http://testserver",
    ],
)
def test_loopback_and_allowed_host_origins_are_accepted(client, origin):
    """basic/transports/streamable-http.mdx, "Security & Endpoint", and the conformance
    suite's dns-rebinding-protection scenario: a request with a localhost Host and Origin must
    be accepted; an origin whose host is in ALLOWED_HOSTS is accepted when ALLOWED_ORIGINS is
    unset."""
    response = mcp_post(client, "server/discover", headers={"Origin": origin})
    assert result_of(response)["resultType"] == "complete"


def test_allowed_origins_setting_lists_exact_origins(client):
    with override_mcp(ALLOWED_ORIGINS=["https://app.example.com"]):
        ok = mcp_post(client, "server/discover", headers={"Origin": "https://app.example.com"})
        assert result_of(ok)
        other = mcp_post(client, "server/discover", headers={"Origin": "https://app.example.org"})
        assert_error(other, 403, -32600)
        http = mcp_post(client, "server/discover", headers={"Origin": "http://app.example.com"})
        assert_error(http, 403, -32600)


def test_allowed_origins_star_accepts_any_origin(client):
    with override_mcp(ALLOWED_ORIGINS=["*"]):
        response = mcp_post(client, "server/discover", headers={"Origin": "https://any.example"})
        assert result_of(response)


def test_a_request_without_origin_is_allowed(client):
    """basic/transports/streamable-http.mdx, "Security & Endpoint", refuses only a present
    and invalid Origin; our choice: non-browser clients send no Origin."""
    assert result_of(mcp_post(client, "server/discover"))


def test_a_disallowed_host_is_400(client):
    """basic/transports/streamable-http.mdx, "Security & Endpoint": ALLOWED_HOSTS already
    returns 400 for a bad Host (DNS rebinding)."""
    response = mcp_post(client, "server/discover", HTTP_HOST="evil.example.com")
    assert response.status_code == 400


def test_a_disallowed_host_is_refused_without_common_middleware(site, settings):
    """The middleware skips its own ``Host`` check only where ``CommonMiddleware`` made
    it already (``process_request`` runs before any ``process_view``); a project without
    it is still protected against DNS rebinding: ``DisallowedHost`` is answered 400, as
    Django answers it, but in the protocol's shape (-32600) and logged where Django logs
    it (``django.security.DisallowedHost``), as on the native paths."""
    assert MCPMiddleware(lambda r: None).host_checked  # type: ignore[arg-type,return-value]
    common = "django.middleware.common.CommonMiddleware"
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != common]
    middleware = MCPMiddleware(lambda r: None)  # type: ignore[arg-type,return-value]
    assert not middleware.host_checked
    view = resolve("/mcp").func
    message = mcp_body("server/discover")

    def post(host: str) -> Any:
        return RequestFactory().post(
            "/mcp",
            json.dumps(message),
            content_type="application/json",
            headers=mcp_headers(message),
            HTTP_HOST=host,
        )

    with mock.patch("django_mcp.http.framing.log_response") as logged:
        refused = middleware.process_view(post("evil.example"), view, (), {})
    assert refused is not None
    assert refused.status_code == 400
    assert json.loads(refused.content)["error"]["code"] == -32600
    assert logged.call_args.kwargs["logger"].name == "django.security.DisallowedHost"
    assert isinstance(logged.call_args.kwargs["exception"], DisallowedHost)
    assert middleware.process_view(post("localhost"), view, (), {}) is None  # admitted


def test_only_an_unchanged_common_middleware_counts_as_checking_the_host():
    """A subclass that overrides ``process_request`` may never call ``get_host()``."""
    assert host_checked_upstream(["django.middleware.common.CommonMiddleware"])
    assert host_checked_upstream([f"{__name__}.KeptCommon"])
    assert not host_checked_upstream([f"{__name__}.OverriddenCommon"])
    assert not host_checked_upstream(["django.middleware.csrf.CsrfViewMiddleware"])
    assert not host_checked_upstream(["no.such.Middleware"])
    assert issubclass(OverriddenCommon, CommonMiddleware)


class KeptCommon(CommonMiddleware):
    """``CommonMiddleware`` with its ``process_request`` unchanged."""


class OverriddenCommon(CommonMiddleware):
    """``CommonMiddleware`` whose ``process_request`` never looks at the host."""

    def process_request(self, request: Any) -> None:
        return None


def test_dns_rebinding_host_and_origin_is_refused_but_localhost_is_served(client):
    """basic/transports/streamable-http.mdx, "Security & Endpoint", as the conformance
    suite's dns-rebinding-protection scenario checks it: Host and Origin evil.example.com to a
    localhost server expects a 4xx; a localhost Host and Origin must be accepted."""
    evil = mcp_post(
        client,
        "server/discover",
        headers={"Origin": "http://evil.example.com"},
        HTTP_HOST="evil.example.com",
    )
    assert 400 <= evil.status_code < 500
    local = mcp_post(
        client,
        "server/discover",
        headers={"Origin": "http://localhost:8000"},
        HTTP_HOST="localhost:8000",
    )
    assert result_of(local)


def test_the_middleware_leaves_other_urls_alone(client):
    """docs/adr/0002-validate-once.md (the middleware is the HTTP face of admission):
    non-MCP URLs are never touched by the middleware."""
    response = client.get("/admin/login/", headers={"Origin": "https://evil.example.com"})
    assert response.status_code == 200
    assert exchange_of(response.wsgi_request) is None


def test_the_middleware_ignores_views_that_are_not_mcp_views():
    request = RequestFactory().get("/x")
    middleware = MCPMiddleware(lambda r: None)  # type: ignore[arg-type,return-value]
    assert middleware.process_view(request, lambda r: None, (), {}) is None
