"""Ids and progress tokens the server would echo are bounded.

Every response repeats the request id (basic/index.mdx, "Responses") and every progress
notification the token (basic/patterns/progress.mdx); unbounded, a client makes the server
write its large value back again and again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from django_mcp.protocol.jsonrpc import MAX_ID_CHARS
from tests.helpers import (
    assert_error,
    mcp_body,
    mcp_headers,
    mcp_post,
    post_raw,
    request_meta,
    result_of,
)

if TYPE_CHECKING:
    from django.test import Client

BIG = "x" * 500_000


@pytest.mark.parametrize("request_id", [BIG, "y" * (MAX_ID_CHARS + 1), 10**MAX_ID_CHARS])
def test_an_oversized_id_is_an_invalid_request_that_is_not_echoed(
    client: Client, request_id: str | int
) -> None:
    """basic/index.mdx: an error omits the id when it could not be read; -32600 is a
    request that is not an acceptable JSON-RPC request."""
    body = mcp_body("server/discover", id=request_id)
    response = post_raw(client, json.dumps(body), mcp_headers(body))

    error = assert_error(response, 400, -32600)
    assert "id" not in response.json(), error
    assert len(response.content) < 1000


def test_an_id_at_the_limit_is_echoed(client: Client) -> None:
    request_id = "z" * MAX_ID_CHARS
    response = mcp_post(client, "server/discover", id=request_id)

    assert result_of(response)["resultType"] == "complete"
    assert response.json()["id"] == request_id


def test_an_oversized_progress_token_is_invalid_params(client: Client) -> None:
    """basic/index.mdx "_meta": a malformed ``_meta`` value is -32602 (HTTP 400); the
    token is not written back, neither in the error nor in notifications."""
    response = mcp_post(client, "server/discover", meta=request_meta(progressToken=BIG))

    error = assert_error(response, 400, -32602)
    assert "progressToken" in error["message"]
    assert len(response.content) < 1000
