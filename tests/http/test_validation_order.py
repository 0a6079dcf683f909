"""The order in which a request is validated over HTTP (docs/errors.md, "Where each error
comes from", whose step numbers the tests use), one test (or a few) per step, each showing
that the earlier step wins when a request breaks several rules.

Sources: basic/transports/streamable-http.mdx ("Sending Messages", "Request Metadata",
"Server Validation", "Backward Compatibility"), basic/index.mdx ("_meta"),
basic/versioning.mdx, server/tools.mdx. [conf] marks what the official conformance suite
expects (docs/conformance.md); [rec] marks our choice where the spec is silent.
"""

from __future__ import annotations

import json
from typing import Annotated

import pytest

from django_mcp import MCPHeader
from tests.helpers import (
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    OMIT,
    VERSION_KEY,
    assert_error,
    b64_sentinel,
    call_tool,
    mcp_post,
    notify,
    override_mcp,
    post_raw,
    request_meta,
    result_of,
)

REMOVED = ("initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe")


# -- step 1: HTTP method ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["get", "delete", "put", "patch", "head", "options"])
@pytest.mark.parametrize("path", ["/mcp", "/mcp/"])
def test_anything_but_post_is_405_with_allow_post(client, method, path):
    """streamable-http.mdx "Backward Compatibility": "HTTP GET or DELETE to the MCP endpoint:
    respond with 405 Method Not Allowed" ([rec]: other methods the same, Allow: POST)."""
    response = getattr(client, method)(path, headers={"Origin": "https://evil.example.com"})
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert response.content == b""
    assert not response.has_header("Content-Type"), "an empty body has no media type"


def test_post_to_the_endpoint_with_and_without_a_trailing_slash_is_served(client):
    """streamable-http.mdx: "The server MUST provide a single HTTP endpoint path"."""
    assert result_of(mcp_post(client, "server/discover", path="/mcp"))["resultType"] == "complete"
    assert result_of(mcp_post(client, "server/discover", path="/mcp/"))["resultType"] == "complete"


# -- step 2: Origin --------------------------------------------------------------------------


def test_a_forbidden_origin_is_403_before_the_body_is_read(client):
    """streamable-http.mdx "Security & Endpoint": "If the Origin header is present and
    invalid, servers MUST respond with HTTP 403 Forbidden. The HTTP response body MAY
    comprise a JSON-RPC error response that has no id." """
    response = post_raw(client, b"{not json", {"Origin": "https://evil.example.com"})
    assert response.status_code == 403
    assert "id" not in response.json()


# -- step 4: JSON ----------------------------------------------------------------------------


def test_a_body_that_is_not_json_is_a_400_parse_error_without_id(client):
    """Step 4 ([rec]: the spec gives no status): body is not JSON -> 400 -32700 (no id)."""
    response = post_raw(client, b'{"jsonrpc": "2.0", "id": 1,', {"Mcp-Method": "tools/list"})
    assert_error(response, 400, -32700)
    assert "id" not in response.json()


# -- step 5: JSON-RPC shape --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "echoed"),
    [
        ([{"jsonrpc": "2.0", "id": 1, "method": "server/discover"}], None),
        ({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}, 1),
        ({"jsonrpc": "1.0", "id": 2, "method": "server/discover"}, 2),
        ({"id": 3, "method": "server/discover"}, 3),
        ({"jsonrpc": "2.0", "id": 4, "method": 7}, 4),
        ({"jsonrpc": "2.0", "id": None, "method": "server/discover"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "server/discover"}, None),
        ({"jsonrpc": "2.0", "id": "x", "method": "server/discover", "params": []}, "x"),
    ],
)
def test_a_body_that_is_not_one_valid_request_is_a_400_invalid_request(client, document, echoed):
    """streamable-http.mdx "Sending Messages": "The body of the HTTP POST MUST be a single
    JSON-RPC request or notification. The client MUST NOT send JSON-RPC responses."
    ([rec]: batches and responses -> 400 -32600). Readable ids are echoed."""
    headers = {"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "nope"}
    response = post_raw(client, json.dumps(document), headers)
    assert_error(response, 400, -32600)
    assert response.json().get("id") == echoed


# -- step 6: notifications -------------------------------------------------------------------


@pytest.mark.parametrize(
    "method", ["notifications/cancelled", "notifications/initialized", "notifications/unknown"]
)
def test_a_notification_is_202_with_an_empty_body(client, method):
    """streamable-http.mdx "Sending Messages": "If the server accepts it, the server MUST
    return HTTP status code 202 Accepted with no body." Unknown ones are ignored (step 6)."""
    response = notify(client, method, {"requestId": 1})
    assert response.status_code == 202
    assert response.content == b""
    assert not response.has_header("Content-Type"), "no body, so no text/html label either"


def test_a_notification_needs_no_mcp_headers_and_no_meta(client):
    """streamable-http.mdx: "header requirements for notification POSTs are not defined by
    this revision" ([rec]: be lenient)."""
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    response = post_raw(client, json.dumps(body))
    assert response.status_code == 202
    assert response.content == b""
    bare = post_raw(client, json.dumps({"jsonrpc": "2.0", "method": "notifications/x"}))
    assert bare.status_code == 202


@pytest.mark.parametrize(
    "document",
    [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": []},
        {"jsonrpc": "1.0", "method": "notifications/cancelled"},
        {"jsonrpc": "2.0", "method": 5},
        {"jsonrpc": "2.0", "method": ""},
    ],
)
def test_a_malformed_notification_is_4xx_with_an_empty_body(client, document):
    """streamable-http.mdx: "If the server cannot accept it, it MUST return an HTTP error
    status code (e.g., 400 Bad Request)"; docs/errors.md: notifications never receive a
    JSON-RPC error body."""
    response = post_raw(client, json.dumps(document))
    assert 400 <= response.status_code < 500
    assert response.content == b""
    assert not response.has_header("Content-Type")


# -- step 7: legacy initialize ---------------------------------------------------------------


def test_initialize_is_404_method_not_found_naming_the_supported_versions(client):
    """basic/versioning.mdx: modern-only servers SHOULD name their supported versions in the
    error to initialize; [conf]: HTTP 404 with -32601."""
    error = assert_error(mcp_post(client, "initialize"), 404, -32601)
    assert error["data"]["supported"] == ["2026-07-28"]


def test_initialize_is_refused_even_without_any_headers_or_meta(client):
    """[rec] (docs/adr/0001-revision-policy.md): special-case initialize whatever the headers
    are (a real legacy client sends none of the new headers nor the per-request _meta)."""
    legacy = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "legacy", "version": "1"},
        },
    }
    response = post_raw(client, json.dumps(legacy))
    error = assert_error(response, 404, -32601)
    assert error["data"]["supported"] == ["2026-07-28"]
    assert response.json()["id"] == 0


# -- step 8: _meta ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "meta",
    [
        OMIT,
        request_meta(**{VERSION_KEY: OMIT}),
        request_meta(**{CAPABILITIES_KEY: OMIT}),
        request_meta(**{VERSION_KEY: 20260728}),
        request_meta(**{CAPABILITIES_KEY: "all"}),
        "not an object",
    ],
    ids=["no-meta", "no-version", "no-capabilities", "int-version", "str-capabilities", "str"],
)
def test_missing_required_meta_with_valid_headers_is_400_invalid_params_with_id(client, meta):
    """basic/index.mdx "_meta" / [conf]: server/discover with a missing _meta, a
    missing protocolVersion or a missing clientCapabilities expects -32602 and HTTP 400,
    with the request id echoed."""
    response = mcp_post(
        client,
        "server/discover",
        id="m-1",
        meta=meta,
        headers={"MCP-Protocol-Version": "2026-07-28"},
    )
    assert_error(response, 400, -32602)
    assert response.json()["id"] == "m-1"


def test_a_request_without_params_at_all_is_400_invalid_params(client):
    """schema.json RequestParams: params is required on core requests and requires _meta."""
    body = {"jsonrpc": "2.0", "id": 5, "method": "server/discover"}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    assert_error(post_raw(client, json.dumps(body), headers), 400, -32602)


def test_missing_meta_wins_over_missing_headers(client):
    """Step 8 [conf]: the _meta check comes before the header comparison."""
    response = mcp_post(
        client, "server/discover", meta=OMIT, headers={"MCP-Protocol-Version": None}
    )
    assert_error(response, 400, -32602)


def test_a_request_without_client_info_is_served(client):
    """basic/index.mdx "_meta": clientInfo is a SHOULD; [conf]: a request without
    clientInfo must be served, HTTP 200."""
    meta = request_meta(**{CLIENT_INFO_KEY: OMIT})
    assert result_of(mcp_post(client, "server/discover", meta=meta))["resultType"] == "complete"


# -- step 9: MCP-Protocol-Version header ------------------------------------------------------


def test_a_missing_protocol_version_header_is_400_header_mismatch(client):
    """streamable-http.mdx: "A server that does not support such clients MUST reject a
    request without the header per Server Validation" (400, -32020)."""
    response = mcp_post(client, "server/discover", headers={"MCP-Protocol-Version": None})
    assert_error(response, 400, -32020)


def test_a_version_header_that_differs_from_the_body_is_400_header_mismatch(client):
    """streamable-http.mdx "Protocol Version Header": "The header value MUST match the
    io.modelcontextprotocol/protocolVersion field ... If the values do not match, the server
    MUST reject the request with 400 Bad Request and a HeaderMismatch JSON-RPC error";
    step 9 [conf]: header 2026-07-28 with body v999.0.0 gives -32020, not -32022."""
    response = mcp_post(
        client,
        "server/discover",
        meta=request_meta(version="v999.0.0"),
        headers={"MCP-Protocol-Version": "2026-07-28"},
    )
    assert_error(response, 400, -32020)


def test_a_supported_body_version_with_another_header_is_a_header_mismatch(client):
    response = mcp_post(client, "server/discover", headers={"MCP-Protocol-Version": "2099-01-01"})
    assert_error(response, 400, -32020)


# -- step 10: version support ------------------------------------------------------------------


def test_an_unsupported_version_in_header_and_body_is_400_with_supported_and_requested(client):
    """streamable-http.mdx: "If the server does not implement the requested protocol
    version ... it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError
    listing its supported versions"; step 10 [conf]: both v999.0.0."""
    response = mcp_post(client, "server/discover", meta=request_meta(version="v999.0.0"))
    error = assert_error(response, 400, -32022)
    assert error["data"] == {"supported": ["2026-07-28"], "requested": "v999.0.0"}


def test_an_older_revision_is_refused_with_unsupported_protocol_version(client):
    """basic/versioning.mdx: a legacy version cannot be used through per-request _meta."""
    response = mcp_post(client, "tools/list", meta=request_meta(version="2025-11-25"))
    assert assert_error(response, 400, -32022)["data"]["requested"] == "2025-11-25"


def test_an_older_revision_listed_for_best_effort_is_still_refused(client):
    """basic/versioning.mdx and docs/adr/0001-revision-policy.md: an older dated revision is
    the handshake era, refused with -32022; BEST_EFFORT_REVISIONS narrows best-effort
    serving to its dates and never widens it to older ones (a listed 2025-11-25 was once
    served with 2026-07-28 rules)."""
    with override_mcp(BEST_EFFORT_REVISIONS=["2025-11-25", "2099-01-01"]):
        refused = mcp_post(client, "tools/list", meta=request_meta(version="2025-11-25"))
        served = mcp_post(client, "tools/list", meta=request_meta(version="2099-01-01"))
    assert assert_error(refused, 400, -32022)["data"]["requested"] == "2025-11-25"
    assert "tools" in result_of(served)


def test_a_newer_dated_revision_is_served_best_effort(client):
    """docs/adr/0001-revision-policy.md: revisions newer than ours are served best-effort
    (HTTP 200)."""
    response = mcp_post(client, "server/discover", meta=request_meta(version="2099-01-01"))
    assert result_of(response)["supportedVersions"] == ["2026-07-28"]


def test_version_support_is_checked_before_the_method_header(client):
    response = mcp_post(
        client,
        "server/discover",
        meta=request_meta(version="v999.0.0"),
        headers={"Mcp-Method": "something/else"},
    )
    assert_error(response, 400, -32022)


# -- step 11: Mcp-Method -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [None, "tools/call", "TOOLS/LIST", "tools/list/", "Tools/List", "tools/list,x"]
)
def test_a_missing_or_different_mcp_method_is_400_header_mismatch(client, value):
    """streamable-http.mdx "Standard Request Headers": Mcp-Method is required for all
    requests; "Header values (such as method names) are case-sensitive"; [conf]:
    an uppercase method value is rejected."""
    assert_error(mcp_post(client, "tools/list", headers={"Mcp-Method": value}), 400, -32020)


def test_the_method_header_is_checked_before_the_method_exists(client):
    response = mcp_post(client, "nope/nope", headers={"Mcp-Method": "tools/list"})
    assert_error(response, 400, -32020)


@pytest.mark.parametrize(
    "names",
    [
        ("mcp-protocol-version", "mcp-method"),
        ("MCP-PROTOCOL-VERSION", "MCP-METHOD"),
        ("Mcp-Protocol-Version", "mCp-MeThOd"),
    ],
)
def test_header_names_are_case_insensitive(client, names):
    """streamable-http.mdx "Case Sensitivity": "Clients and servers MUST use
    case-insensitive comparisons for header names." """
    version_name, method_name = names
    headers = {
        "MCP-Protocol-Version": None,
        "Mcp-Method": None,
        version_name: "2026-07-28",
        method_name: "server/discover",
    }
    assert result_of(mcp_post(client, "server/discover", headers=headers))


def test_header_values_are_trimmed_of_surrounding_whitespace(client):
    """streamable-http.mdx "Request Metadata" (values per RFC 9110) [conf]: leading and
    trailing whitespace around values must be tolerated."""
    headers = {"MCP-Protocol-Version": " 2026-07-28\t", "Mcp-Method": "  server/discover "}
    assert result_of(mcp_post(client, "server/discover", headers=headers))


# -- step 12: method exists --------------------------------------------------------------------


@pytest.mark.parametrize("method", ["nope/nope", "tools/List", "tasks/nope", "server/discover/"])
def test_an_unknown_method_is_404_method_not_found(client, method):
    """streamable-http.mdx: "If the server does not implement the requested RPC method, it
    MUST respond with 404 Not Found and a JSON-RPC error with code -32601"."""
    assert_error(mcp_post(client, method), 404, -32601)


@pytest.mark.parametrize("method", REMOVED)
def test_removed_methods_are_404_method_not_found(client, method):
    """changelog.mdx (removed methods) [conf]: initialize, ping, logging/setLevel,
    resources/subscribe and resources/unsubscribe with valid _meta and headers expect HTTP 404
    and -32601."""
    assert_error(mcp_post(client, method), 404, -32601)


def test_a_method_whose_capability_is_not_advertised_is_404(client, mcp_site):
    """schema.json MethodNotFoundError: "either a genuinely unknown method, or one gated
    behind a server capability the server did not advertise"."""
    assert_error(mcp_post(client, "prompts/list"), 404, -32601)
    assert_error(mcp_post(client, "tools/list"), 404, -32601)


# -- step 13: Mcp-Name -------------------------------------------------------------------------


@pytest.fixture
def tools_site(mcp_site):
    @mcp_site.tool
    def echo(text: str = "") -> str:
        return text

    @mcp_site.resource("test://café/menu")
    def menu() -> str:
        return "ok"

    @mcp_site.tool
    def deploy(
        region: Annotated[str, MCPHeader("Region")],
        replicas: Annotated[int, MCPHeader("Replicas")] = 1,
        dry_run: Annotated[bool, MCPHeader("Dry-Run")] = False,
        tenant: Annotated[str | None, MCPHeader("Tenant-Id")] = None,
    ) -> str:
        return f"{region}:{replicas}:{dry_run}:{tenant}"

    return mcp_site


@pytest.mark.parametrize("value", [None, "ech", "ECHO", "echo2", "=?base64?ZWNobw?="])
def test_a_missing_different_or_undecodable_mcp_name_is_400_header_mismatch(
    client, tools_site, value
):
    """streamable-http.mdx "Server Validation": a missing required Mcp-Name, a value that
    does not match the body, or an invalid base64 sentinel are validation failures."""
    assert_error(call_tool(client, "echo", {}, headers={"Mcp-Name": value}), 400, -32020)


@pytest.mark.parametrize(
    "value", ["echo", " echo ", "\techo", b64_sentinel("echo")], ids=["plain", "sp", "tab", "b64"]
)
def test_mcp_name_accepts_whitespace_and_the_base64_sentinel(client, tools_site, value):
    """streamable-http.mdx "Value Encoding": servers MUST decode an encoded Mcp-Name before
    comparing; [conf]: Mcp-Name with surrounding whitespace is accepted."""
    assert result_of(call_tool(client, "echo", {}, headers={"Mcp-Name": value}))


def test_a_non_ascii_resource_uri_travels_base64_encoded(client, tools_site):
    """streamable-http.mdx "Value Encoding": a name or resource URI outside the safe set is
    carried as ``Mcp-Name: =?base64?{Base64EncodedValue}?=`` and decoded before comparing."""
    uri = "test://café/menu"
    response = mcp_post(client, "resources/read", {"uri": uri})
    assert response.request["HTTP_MCP_NAME"] == b64_sentinel(uri)
    assert result_of(response)["contents"][0]["text"] == "ok"
    plain = mcp_post(client, "resources/read", {"uri": uri}, headers={"Mcp-Name": uri})
    assert_error(plain, 400, -32020)


def test_mcp_name_is_checked_before_the_tool_exists(client, tools_site):
    assert_error(call_tool(client, "nope", {}, headers={"Mcp-Name": "echo"}), 400, -32020)


def test_the_mcp_name_header_name_is_case_insensitive(client, tools_site):
    """streamable-http.mdx "Case Sensitivity"."""
    response = call_tool(client, "echo", {}, headers={"Mcp-Name": None, "MCP-NAME": "echo"})
    assert result_of(response)


# -- step 14: unknown tool, then Mcp-Param-* -------------------------------------------------


def test_an_unknown_tool_is_200_invalid_params(client, tools_site):
    """server/tools.mdx "Error Handling": unknown tools are protocol errors (-32602);
    [rec] (docs/errors.md, "Why 200 for some errors"): status 200 for application-level
    errors."""
    assert assert_error(call_tool(client, "nope", {}), 200, -32602)["data"] == {"name": "nope"}


DEPLOY = {"region": "eu-west1", "replicas": 3, "dry_run": True}
DEPLOY_HEADERS = {
    "Mcp-Param-Region": "eu-west1",
    "Mcp-Param-Replicas": "3",
    "Mcp-Param-Dry-Run": "true",
}


def test_matching_param_headers_are_served(client, tools_site):
    """streamable-http.mdx "Custom Headers from Tool Parameters": "Server MUST validate
    header matches body"."""
    response = call_tool(client, "deploy", DEPLOY, headers=DEPLOY_HEADERS)
    assert result_of(response)["content"][0]["text"] == "eu-west1:3:True:None"


@pytest.mark.parametrize(
    "override",
    [
        {"Mcp-Param-Replicas": "3.0"},
        {"Mcp-Param-Replicas": " 3 "},
        {"Mcp-Param-Region": b64_sentinel("eu-west1")},
        {"mcp-param-region": "eu-west1", "Mcp-Param-Region": None},
        {"Mcp-Param-Unknown": "whatever"},
    ],
)
def test_param_headers_compare_decoded_trimmed_numeric_and_case_insensitive(
    client, tools_site, override
):
    """streamable-http.mdx: integers compare numerically (42.0 equals 42), encoded values are
    decoded first, header names are case-insensitive, and unknown Mcp-Param-* headers are
    ignored."""
    headers = {**DEPLOY_HEADERS, **override}
    assert result_of(call_tool(client, "deploy", DEPLOY, headers=headers))


@pytest.mark.parametrize(
    "override",
    [
        {"Mcp-Param-Region": None},
        {"Mcp-Param-Region": "us-east1"},
        {"Mcp-Param-Region": "EU-WEST1"},
        {"Mcp-Param-Region": "=?base64?ZXUtd2VzdDE?="},
        {"Mcp-Param-Region": "eu-west1\r\nX-Injected: 1"},
        {"Mcp-Param-Region": "eu-wést1"},
        {"Mcp-Param-Replicas": None},
        {"Mcp-Param-Replicas": "4"},
        {"Mcp-Param-Replicas": "three"},
        {"Mcp-Param-Dry-Run": None},
        {"Mcp-Param-Dry-Run": "True"},
        {"Mcp-Param-Dry-Run": "false"},
        {"Mcp-Param-Dry-Run": "1"},
    ],
)
def test_missing_or_different_param_headers_are_400_header_mismatch(client, tools_site, override):
    """streamable-http.mdx "Server Behavior for Custom Headers": "Servers MUST reject
    requests with a recognized Mcp-Param-{Name} header that contains invalid characters" and
    "Client omits header but value is in body: Server MUST reject the request" (400, -32020)."""
    headers = {**DEPLOY_HEADERS, **override}
    assert_error(call_tool(client, "deploy", DEPLOY, headers=headers), 400, -32020)


def test_absent_or_null_params_need_no_header(client, tools_site):
    """streamable-http.mdx: "Parameter value is null: Client MUST omit the header, Server
    MUST NOT expect the header"; "Parameter not in arguments: ... Server MUST NOT expect the
    header"."""
    response = call_tool(
        client, "deploy", {"region": "eu", "tenant": None}, headers={"Mcp-Param-Region": "eu"}
    )
    assert result_of(response)["content"][0]["text"] == "eu:1:False:None"


def test_a_param_header_named_with_a_hyphen_is_found(client, tools_site):
    response = call_tool(
        client,
        "deploy",
        {"region": "eu", "tenant": "acme"},
        headers={"Mcp-Param-Region": "eu", "Mcp-Param-Tenant-Id": "acme"},
    )
    assert result_of(response)["content"][0]["text"] == "eu:1:False:acme"


def test_param_headers_are_checked_only_after_the_tool_is_known(client, tools_site):
    assert_error(call_tool(client, "nope", DEPLOY), 200, -32602)


# -- step 15: logLevel ------------------------------------------------------------------------


def test_an_invalid_log_level_is_invalid_params(client):
    """server/utilities/logging.mdx: an unrecognised logLevel value SHOULD be rejected with
    -32602."""
    meta = request_meta(**{"io.modelcontextprotocol/logLevel": "LOUD"})
    assert assert_error(mcp_post(client, "server/discover", meta=meta), 400, -32602)


def test_header_checks_come_before_the_log_level(client):
    meta = request_meta(**{"io.modelcontextprotocol/logLevel": "LOUD"})
    response = mcp_post(client, "server/discover", meta=meta, headers={"Mcp-Method": "x"})
    assert_error(response, 400, -32020)


# -- legacy headers --------------------------------------------------------------------------


def test_session_and_last_event_id_headers_are_ignored_and_never_echoed(client):
    """streamable-http.mdx "Backward Compatibility": "An Mcp-Session-Id header on a request:
    ignore it, and do not mint or echo session IDs. A Last-Event-ID header: ignore it"."""
    response = mcp_post(
        client,
        "server/discover",
        headers={"Mcp-Session-Id": "abc123", "Last-Event-ID": "42"},
    )
    assert result_of(response)["resultType"] == "complete"
    assert "Mcp-Session-Id" not in response
    assert "Last-Event-ID" not in response
    assert b"abc123" not in response.content
