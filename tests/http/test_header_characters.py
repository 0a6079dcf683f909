"""``MCP-Protocol-Version`` and ``Mcp-Method`` holding characters no header value may hold
are refused as header failures, even when the body holds the same characters.

basic/transports/streamable-http.mdx, "Server Validation": a header value that "contains
invalid characters" is a validation failure, answered 400 with -32020 (HeaderMismatch);
"Value Encoding": a header value is visible ASCII and spaces, and only ``Mcp-Name`` and
``Mcp-Param-*`` may carry anything else, base64-encoded. Only those two were checked for
it: a control character or a raw non-ASCII byte (which ASGI and WSGI servers pass on,
decoded as Latin-1) in the other two matched a body holding the same text, so the request
went on to -32022 or to a 404 as if its headers were valid.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import assert_error, mcp_post, request_meta

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("version", ["2026-07-28\x00", "2026-07-28\u00e9", "2026\x7f-07-28"])
def test_a_protocol_version_header_with_invalid_characters_is_a_header_failure(
    client: Any, mcp_site: Any, version: str
) -> None:
    response = mcp_post(
        client,
        "tools/list",
        meta=request_meta(version=version),
        headers={"MCP-Protocol-Version": version},
    )
    error = assert_error(response, 400, -32020)
    assert "MCP-Protocol-Version" in error["message"]


@pytest.mark.parametrize("method", ["tools/list\x00", "tools/list\u00e9", "tools/\x1blist"])
def test_a_method_header_with_invalid_characters_is_a_header_failure(
    client: Any, mcp_site: Any, method: str
) -> None:
    response = mcp_post(client, method, headers={"Mcp-Method": method})
    error = assert_error(response, 400, -32020)
    assert "Mcp-Method" in error["message"]
