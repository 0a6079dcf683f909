"""An integer argument mirrored in an ``Mcp-Param-*`` header must be a safe integer.

basic/transports/streamable-http.mdx, "Custom Headers from Tool Parameters", constraints on
``x-mcp-header``: integer values MUST be within the safe range for JavaScript
(-(2**53)+1 to 2**53-1); and "Server Validation": a header that fails validation is refused
with 400 and -32020 (HeaderMismatch). Outside that range a gateway that reads the header as
a double routes on another number than the one the server acts on (``9007199254740993``
reads as ``9007199254740992``), which is what the mirrored headers must never allow. The
value was compared exactly instead, so such a call was served.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from django_mcp import MCPHeader
from tests.helpers import assert_error, call_tool, result_of

pytestmark = pytest.mark.django_db

MAX_SAFE = 2**53 - 1


@pytest.fixture
def routes(mcp_site: Any) -> Any:
    @mcp_site.tool
    def account(number: Annotated[int, MCPHeader("Account")]) -> str:
        return f"account {number}"

    return mcp_site


@pytest.mark.parametrize("number", [MAX_SAFE + 2, -(MAX_SAFE + 2), 10**30])
def test_an_integer_outside_the_safe_range_is_refused(
    client: Any, routes: Any, number: int
) -> None:
    response = call_tool(
        client, "account", {"number": number}, headers={"Mcp-Param-Account": str(number)}
    )
    error = assert_error(response, 400, -32020)
    assert "Mcp-Param-Account" in error["message"]


@pytest.mark.parametrize("number", [MAX_SAFE, -MAX_SAFE, 0])
def test_the_safe_range_is_served_to_its_ends(client: Any, routes: Any, number: int) -> None:
    response = call_tool(
        client, "account", {"number": number}, headers={"Mcp-Param-Account": str(number)}
    )
    assert result_of(response)["content"][0]["text"] == f"account {number}"
