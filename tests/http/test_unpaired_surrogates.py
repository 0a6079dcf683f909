"""A lone surrogate escape in a request's params is refused at admission with -32602.

``"\\ud800"`` is valid JSON syntax (basic/index.mdx: messages are JSON-RPC 2.0, UTF-8
encoded), but the string it spells is not Unicode text: UTF-8 cannot encode it, and I-JSON
(RFC 7493, section 2.1) forbids it. Passed on, it failed inside whatever encoded it: the
database query of a ``ModelTools`` search, of a completion, of a prompt's arguments, each
answered -32603 (an internal error for the client's own input). basic/index.mdx, "Error
Codes": -32602 is invalid params, answered with HTTP 200 as the other -32602 errors about
a request's params (docs/errors.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers import assert_error, mcp_body, mcp_headers, post_raw, result_of

pytestmark = pytest.mark.django_db

LONE = "a\ud800b"


def post(client: Any, method: str, params: dict[str, Any]) -> Any:
    """``json.dumps`` writes the lone surrogate as the escape a client would send."""
    body = mcp_body(method, params)
    return post_raw(client, json.dumps(body), mcp_headers(body))


@pytest.mark.parametrize(
    ("method", "params", "where"),
    [
        (
            "tools/call",
            {"name": "author_list", "arguments": {"search": LONE}},
            "params.arguments.search",
        ),
        (
            "tools/call",
            {"name": "search_books", "arguments": {"query": [LONE]}},
            "params.arguments.query[0]",
        ),
        (
            "tools/call",
            {"name": "search_books", "arguments": {LONE: 1}},
            "params.arguments (a key)",
        ),
        (
            "prompts/get",
            {"name": "review_request", "arguments": {"isbn": LONE}},
            "params.arguments.isbn",
        ),
        (
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "review_request"},
                "argument": {"name": "isbn", "value": LONE},
            },
            "params.argument.value",
        ),
    ],
)
def test_a_lone_surrogate_in_params_is_invalid_params_naming_where(client, method, params, where):
    error = assert_error(post(client, method, params), 200, -32602)
    assert error["message"] == (
        f"{where} holds an unpaired UTF-16 surrogate escape (\\ud800 to \\udfff), "
        "which is not a character"
    )


def test_a_surrogate_pair_is_one_character_and_goes_through(client):
    """``"\\ud83d\\ude00"`` is U+1F600 spelt as a pair: text, so the call is answered."""
    body = mcp_body("tools/call", {"name": "search_books", "arguments": {"query": "\U0001f600"}})
    raw = json.dumps(body)
    assert "\\ud83d\\ude00" in raw
    result = result_of(post_raw(client, raw, mcp_headers(body)))
    assert "isError" not in result or result["isError"] is False, result


def test_a_lone_surrogate_in_meta_is_not_refused(client):
    """``_meta`` is left to its own rules: a client's self-reported name is made storable
    where it is stored (the request log), and the request is served."""
    body = mcp_body("tools/list", {})
    body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"] = LONE
    result = result_of(post_raw(client, json.dumps(body), mcp_headers(body)))
    assert "tools" in result
