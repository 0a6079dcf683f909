"""Optional request ``_meta`` keys sent as an explicit ``null``, over HTTP.

schema.json ``RequestMetaObject`` types ``io.modelcontextprotocol/clientInfo`` as an
``Implementation`` (an object with ``name`` and ``version``),
``io.modelcontextprotocol/logLevel`` as a ``LoggingLevel`` (a string enum) and
``progressToken`` as a ``ProgressToken`` (string | integer), and lists none of them in
``required``: an optional key is optional by being left out, and ``null`` is a value of
none of those types. The server took ``null`` for a key left out (no progress, no logs,
no client) and served the request; it now refuses it as it refuses any other malformed
optional key, step 15 of docs/errors.md: -32602 with HTTP 400 (basic/index.mdx, "_meta":
a malformed request is rejected with -32602 Invalid params, on HTTP with 400), the
message naming the key.
"""

from __future__ import annotations

import pytest

from tests.helpers import (
    CLIENT_INFO_KEY,
    assert_error,
    call_tool,
    mcp_post,
    request_meta,
)

LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
NULLABLE_BY_MISTAKE = [CLIENT_INFO_KEY, LOG_LEVEL_KEY, "progressToken"]


@pytest.mark.parametrize("key", NULLABLE_BY_MISTAKE)
@pytest.mark.parametrize("method", ["server/discover", "tools/list"])
def test_an_optional_meta_key_sent_as_null_is_invalid_params(client, method, key):
    """schema.json ``RequestMetaObject``: none of the three admits null; basic/index.mdx,
    "_meta": a malformed request ``_meta`` is -32602 and, on HTTP, 400. The answer names
    the key and echoes the request's id."""
    response = mcp_post(client, method, {}, id=41, meta=request_meta(**{key: None}))

    error = assert_error(response, 400, -32602)
    assert key in error["message"]
    assert response.json()["id"] == 41


def test_a_null_progress_token_on_a_tool_call_is_refused(client):
    """schema.json ``ProgressToken``: string | integer. A ``tools/call`` with a null token
    was run and answered as if no progress was asked for; it is refused (400, -32602)."""
    meta = request_meta(progressToken=None)

    response = call_tool(client, "test_tool_with_progress", meta=meta)

    error = assert_error(response, 400, -32602)
    assert "progressToken" in error["message"]


def test_header_checks_come_before_a_null_meta_key(client):
    """docs/errors.md, "Where each error comes from": the optional ``_meta`` keys are step
    15, after the ``Mcp-Method`` header (step 11), as for any other malformed value."""
    meta = request_meta(**{LOG_LEVEL_KEY: None})

    response = mcp_post(client, "server/discover", meta=meta, headers={"Mcp-Method": "x"})

    assert_error(response, 400, -32020)
