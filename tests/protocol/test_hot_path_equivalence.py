"""The hot path's shortcuts answer exactly what the long way answers.

``normalise_environ`` reads headers from a WSGI environ instead of Django's header mapping,
and ``may_nest_deeper`` skips the depth walk of bodies with too few brackets to be too
deep: both must never change an outcome (basic/transports/streamable-http.mdx headers;
RFC 8259 nesting).
"""

from __future__ import annotations

import json

import pytest
from django.http.request import HttpHeaders

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.headers import normalise, normalise_environ

ENVIRON = {
    "REQUEST_METHOD": "POST",
    "CONTENT_TYPE": "application/json",
    "CONTENT_LENGTH": "12",
    "HTTP_MCP_PROTOCOL_VERSION": " 2026-07-28\t",
    "HTTP_MCP_METHOD": "tools/call",
    "HTTP_MCP_NAME": "add",
    "HTTP_MCP_PARAM_REGION": "eu-west",
    "HTTP_X_FORWARDED_FOR": "10.0.0.1",
    "wsgi.url_scheme": "http",
    "SERVER_NAME": "testserver",
}


def test_headers_from_the_environ_equal_the_normalised_django_headers():
    assert normalise_environ(ENVIRON) == normalise(HttpHeaders(ENVIRON))


@pytest.mark.parametrize(
    "name",
    [
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-param-region",
        "mcp-param-tenant_id",  # the spelling admission tries first for Tenant_Id
        "mcp-param-missing",
        "content-type",
        "content-length",
        "x-forwarded-for",
        "request-method",  # an environ key without HTTP_: not a header
        "server-name",
    ],
)
def test_each_lookup_answers_what_the_whole_normalised_mapping_answers(name):
    """Admission reads headers by name only; each lookup goes straight to the environ."""
    environ = {**ENVIRON, "HTTP_MCP_PARAM_TENANT_ID": " t-1 "}
    expected = normalise(HttpHeaders(environ))

    assert normalise_environ(environ).get(name) == expected.get(name.replace("_", "-"))


@pytest.mark.parametrize("levels", [0, 1, 3, 10, 11, 40])
def test_the_depth_limit_answers_the_same_with_the_bracket_count_shortcut(levels):
    document: object = "x"
    for level in range(levels):
        document = [document] if level % 2 else {"k": document}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"v": document}})
    too_deep = jsonrpc.depth(json.loads(body)) > 10
    if too_deep:
        assert jsonrpc.may_nest_deeper(body.encode(), 10)
        with pytest.raises(jsonrpc.MessageError):
            jsonrpc.parse_message(body.encode(), max_depth=10)
    else:
        assert jsonrpc.parse_message(body.encode(), max_depth=10).method == "m"


def test_brackets_inside_strings_only_make_the_walk_run():
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"s": "[[[[{{{{"}})
    assert jsonrpc.may_nest_deeper(body.encode(), 4)
    assert jsonrpc.parse_message(body.encode(), max_depth=4).method == "m"
