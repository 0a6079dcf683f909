"""Header mirroring and the base64 sentinel (basic/transports/streamable-http.mdx,
"Request Metadata", "Value Encoding", "Server Validation")."""

from __future__ import annotations

from typing import Any

import pytest

from django_mcp.protocol import errors
from django_mcp.protocol import headers as h
from django_mcp.protocol.headers import HeaderParam
from tests.helpers import b64_sentinel

REGION = HeaderParam("region", "Region", "string")
COUNT = HeaderParam("count", "Count", "integer")
DRY_RUN = HeaderParam("dry_run", "Dry-Run", "boolean")
PARAMS = {p.argument: p for p in (REGION, COUNT, DRY_RUN)}


def mismatch(func: Any, *args: Any) -> errors.MCPError:
    with pytest.raises(errors.HeaderMismatch) as info:
        func(*args)
    assert info.value.code == errors.HEADER_MISMATCH
    return info.value


def test_normalise_lowercases_names_and_trims_optional_whitespace():
    """streamable-http.mdx "Case Sensitivity": header names are case-insensitive; RFC 9110:
    leading and trailing whitespace is not part of the value."""
    assert h.normalise({"MCP-Protocol-Version": " 2026-07-28\t", "mcp-METHOD": "x"}) == {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "x",
    }


@pytest.mark.parametrize(
    "text", ["Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "", "plain"]
)
def test_the_base64_sentinel_decodes_to_the_utf8_text(text):
    """streamable-http.mdx "Value Encoding": ``=?base64?{Base64EncodedValue}?=`` carries the
    UTF-8 of values that are not safe plain ASCII; servers MUST decode before comparing."""
    assert h.decode_value(b64_sentinel(text), "Mcp-Name") == text


def test_the_spec_encoding_examples_decode():
    """streamable-http.mdx, the encoding examples table."""
    assert h.decode_value("=?base64?SGVsbG8sIOS4lueVjA==?=", "X") == "Hello, 世界"
    assert h.decode_value("=?base64?IHBhZGRlZCA=?=", "X") == " padded "
    assert h.decode_value("=?base64?bGluZTEKbGluZTI=?=", "X") == "line1\nline2"
    assert h.decode_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=", "X") == "=?base64?literal?="


@pytest.mark.parametrize(
    "raw",
    [
        "=?base64?SGVsbG8?=",  # missing padding
        "=?base64?SGVsbA=?=",  # wrong padding
        "=?base64?SGVsbG8==?=",  # excess padding
        "=?base64?SGV sbG8=?=",  # inner space
        "=?base64?SGVs*bG8=?=",  # invalid character
        "=?base64?SGVsbG8\u00e9?=",  # non-ASCII inside the sentinel
        "=?base64?/w==?=",  # valid base64, invalid UTF-8
        "=?base64?dGVzdB==?=",  # stray low bits: also "test", not its canonical spelling
        "=?base64?dGVzdA===?=",  # excess padding
        "=?base64?dGVzdA==dGVzdA==?=",  # data after padding
    ],
)
def test_invalid_base64_inside_the_sentinel_is_a_header_mismatch(raw):
    """streamable-http.mdx "Value Encoding" and "Server Validation": invalid base64 inside the
    sentinel (bad padding or bad characters) is a validation failure: 400 -32020."""
    mismatch(h.decode_value, raw, "Mcp-Name")


@pytest.mark.parametrize(
    "raw", ["=?BASE64?SGVsbG8=?=", "=?base64?SGVsbG8=", "SGVsbG8=?=", "=?Base64?eA==?="]
)
def test_uppercase_or_incomplete_markers_are_ordinary_literals(raw):
    """streamable-http.mdx: the markers are case-sensitive and MUST appear exactly as shown
    (lowercase); anything else is a plain value."""
    assert h.decode_value(raw, "Mcp-Name") == raw


@pytest.mark.parametrize("raw", ["caf\u00e9", "a\x00b", "a\rb", "a\nb", "a\x7fb", "\u4e16"])
def test_plain_values_with_non_ascii_or_control_characters_are_refused(raw):
    """streamable-http.mdx "Server Behavior for Custom Headers": servers MUST reject a
    recognized header that contains invalid characters."""
    mismatch(h.decode_value, raw, "Mcp-Name")


def test_require_name_decodes_the_sentinel_before_comparing():
    h.require_name({"mcp-name": b64_sentinel("get_wéather")}, "get_wéather")
    h.require_name({"mcp-name": "get_weather"}, "get_weather")


@pytest.mark.parametrize(
    "headers", [{}, {"mcp-name": "other"}, {"mcp-name": "GET_WEATHER"}, {"Mcp-Name": "get"}]
)
def test_require_name_refuses_missing_or_different_values(headers):
    """streamable-http.mdx "Server Validation": a missing required header or a value that
    does not match the body is rejected."""
    mismatch(h.require_name, headers, "get_weather")


def test_require_equal_compares_values_case_sensitively():
    """streamable-http.mdx "Case Sensitivity": header values are case-sensitive."""
    h.require_equal({"mcp-method": "tools/list"}, "mcp-method", "Mcp-Method", "tools/list")
    mismatch(h.require_equal, {"mcp-method": "TOOLS/LIST"}, "mcp-method", "M", "tools/list")
    mismatch(h.require_equal, {}, "mcp-method", "M", "tools/list")


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("42", 42),
        ("42.0", 42),
        ("42", 42.0),
        ("-7", -7),
        ("0", 0),
        (str(2**53 - 1), 2**53 - 1),
    ],
)
def test_integer_params_compare_numerically(header, value):
    """streamable-http.mdx "Server Validation": servers SHOULD compare integer values
    numerically (``42.0`` and ``42`` are equal)."""
    h.require_params({"mcp-param-count": header}, {"count": COUNT}, {"count": value})


@pytest.mark.parametrize("header", ["43", "forty-two", "", "42abc", "0x2a", "NaN"])
def test_integer_params_that_differ_are_refused(header):
    mismatch(h.require_params, {"mcp-param-count": header}, {"count": COUNT}, {"count": 42})


@pytest.mark.parametrize(
    "text", ["4_2", "\u0664\u0662", "\uff14\uff12", "+42", "042", " 42", "42."]
)
def test_integer_params_must_be_written_as_an_ascii_json_number(text):
    """streamable-http.mdx "Value Encoding": an integer travels as its decimal text
    (``42``, ``-7``). Python's Decimal also reads ``4_2`` and other scripts' digits
    (Arabic-Indic or full-width forty-two) as 42: an intermediary routing on the header
    reads another value than the server checks, the split the header check exists to
    prevent (-32020)."""
    header = text if text.isascii() else b64_sentinel(text)
    mismatch(h.require_params, {"mcp-param-count": header}, {"count": COUNT}, {"count": 42})


@pytest.mark.parametrize(("header", "value"), [("true", True), ("false", False)])
def test_boolean_params_are_lowercase_true_or_false(header, value):
    """streamable-http.mdx "Type conversion": booleans become lowercase "true"/"false"."""
    h.require_params({"mcp-param-dry-run": header}, {"dry_run": DRY_RUN}, {"dry_run": value})


@pytest.mark.parametrize(("header", "value"), [("True", True), ("1", True), ("true", False)])
def test_boolean_params_that_differ_are_refused(header, value):
    mismatch(
        h.require_params, {"mcp-param-dry-run": header}, {"dry_run": DRY_RUN}, {"dry_run": value}
    )


def test_string_params_compare_exactly_after_decoding():
    h.require_params({"mcp-param-region": "us-west1"}, PARAMS, {"region": "us-west1"})
    h.require_params({"mcp-param-region": b64_sentinel("Zürich")}, PARAMS, {"region": "Zürich"})
    mismatch(h.require_params, {"mcp-param-region": "US-WEST1"}, PARAMS, {"region": "us-west1"})
    mismatch(h.require_params, {"mcp-param-region": "=?base64?!!?="}, PARAMS, {"region": "x"})


def test_a_param_present_in_the_body_needs_its_header():
    """streamable-http.mdx: "Client omits header but value is in body: Server MUST reject"."""
    mismatch(h.require_params, {}, PARAMS, {"region": "us-west1"})
    mismatch(h.require_params, {}, PARAMS, {"count": 0})
    mismatch(h.require_params, {}, PARAMS, {"dry_run": False})


def test_absent_or_null_params_need_no_header():
    """streamable-http.mdx: "Parameter value is null / not in arguments: Server MUST NOT
    expect the header"."""
    h.require_params({}, PARAMS, {})
    h.require_params({}, PARAMS, {"region": None, "count": None, "dry_run": None})
    h.require_params({}, PARAMS, {"unrelated": "x"})


def test_param_header_names_are_matched_case_insensitively():
    """streamable-http.mdx "Case Sensitivity": header names are case-insensitive."""
    upper = HeaderParam("region", "REGION", "string")
    h.require_params(h.normalise({"Mcp-Param-Region": "eu"}), {"region": upper}, {"region": "eu"})


def test_the_token_grammar_of_x_mcp_header_names():
    """streamable-http.mdx "Schema Extension": x-mcp-header values match ``1*tchar``."""
    for good in ("Region", "x-Tenant", "a.b", "A_1", "~!#$%&'*+-.^_`|"):
        assert h.TOKEN.match(good)
    for bad in ("", "a b", "a:b", "a/b", "é", "a\r", "a\n", "(x)"):
        assert not h.TOKEN.match(bad)


def test_a_param_header_is_looked_up_only_by_the_name_the_schema_gives():
    """The name with ``-`` for ``_`` is another header: a declaration holding ``_`` is
    refused (servers drop such headers), so admission looks up no other spelling and
    rewards none."""
    tenant = {"tenant": HeaderParam("tenant", "Tenant_Id", "string")}
    h.require_params({"mcp-param-tenant_id": "acme"}, tenant, {"tenant": "acme"})
    mismatch(h.require_params, {"mcp-param-tenant-id": "acme"}, tenant, {"tenant": "acme"})


def test_a_header_for_an_absent_or_null_param_is_refused():
    """streamable-http.mdx, "Server Validation": a header value that does not match the
    body is refused; a value the body lacks matches no header."""
    mismatch(h.require_params, {"mcp-param-region": "us"}, PARAMS, {})
    mismatch(h.require_params, {"mcp-param-region": "us"}, PARAMS, {"region": None})
