"""A header that mirrors the body, sent on more than one line, is refused under ASGI.

basic/transports/streamable-http.mdx, "Custom Headers from Tool Parameters" and "Server
Validation": ``Mcp-Method``, ``Mcp-Name`` and each ``Mcp-Param-{Name}`` carry one value of
the body, so that an intermediary can route on the header; the server MUST reject a header
that does not match the body (400, -32020). Django joins repeated header lines with a comma
(RFC 9110 section 5.3 allows repeating only list-valued fields), so ``us`` on one line and
``eu`` on the next matched a body of ``"us,eu"`` while a proxy reading the first line routed
on ``us``. An ASGI server hands the lines over one by one (the scope's ``headers``), so both
of Django's ASGI paths refuse them; under WSGI the server has joined them already (see
docs/security.md).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Annotated, Any

import httpx
import pytest
from django.core.asgi import get_asgi_application

from django_mcp import MCPHeader
from django_mcp.http.asgi import BodyLimit
from django_mcp.http.native import NativeMCP
from django_mcp.protocol.headers import repeated_names
from tests.helpers import mcp_body, mcp_headers

if TYPE_CHECKING:
    from django_mcp.sites import MCPSite

APPS = {
    "django": lambda: BodyLimit(get_asgi_application()),
    "native": lambda: NativeMCP(get_asgi_application()),
}

pytestmark = pytest.mark.django_db


@pytest.fixture(params=sorted(APPS))
def app(request: pytest.FixtureRequest, mcp_site: MCPSite) -> Any:
    @mcp_site.tool
    def route(region: Annotated[str, MCPHeader("Region")]) -> str:
        return f"routed to {region}"

    return APPS[request.param]()


def post(app: Any, region: str, *extra: tuple[str, str]) -> httpx.Response:
    """``tools/call route`` with its headers mirrored, then the ``extra`` header lines."""
    body = mcp_body("tools/call", {"name": "route", "arguments": {"region": region}})
    lines = [*mcp_headers(body).items(), *extra]

    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await c.post("/mcp", content=json.dumps(body), headers=lines)

    return asyncio.run(run())


def refusal(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    message: dict[str, Any] = response.json()
    assert message["error"]["code"] == -32020
    assert message["id"] == 1
    return message


def test_one_line_per_header_is_served(app: Any) -> None:
    response = post(app, "us,eu", ("Mcp-Param-Region", "us,eu"))
    assert response.status_code == 200, response.text
    assert response.json()["result"]["content"][0]["text"] == "routed to us,eu"


def test_an_mcp_param_header_on_two_lines_is_refused(app: Any) -> None:
    response = post(app, "us,eu", ("Mcp-Param-Region", "us"), ("mcp-param-region", "eu"))
    assert "Mcp-Param-Region header is sent more than once" in refusal(response)["error"]["message"]


@pytest.mark.parametrize(
    ("header", "value"),
    [("Mcp-Method", "tools/call"), ("Mcp-Name", "route"), ("MCP-Protocol-Version", "2026-07-28")],
)
def test_a_mirrored_header_repeated_with_its_own_value_is_refused(
    app: Any, header: str, value: str
) -> None:
    """The same value twice as well: no header that mirrors the body is a list."""
    response = post(app, "us", ("Mcp-Param-Region", "us"), (header, value))
    assert "sent more than once" in refusal(response)["error"]["message"]


def test_other_headers_may_repeat(app: Any) -> None:
    """Only ``mcp-`` headers mirror the body; a list-valued header repeats as HTTP allows."""
    response = post(app, "us", ("Mcp-Param-Region", "us"), ("Accept", "text/event-stream"))
    assert response.status_code == 200, response.text


def test_repeated_names_reads_the_scopes_header_lines() -> None:
    scope = {
        "headers": [
            (b"mcp-param-region", b"us"),
            (b"accept", b"a"),
            (b"accept", b"b"),
            (b"MCP-Param-Region", b"eu"),
            (b"mcp-method", b"tools/call"),
        ]
    }
    assert repeated_names(scope) == {"mcp-param-region"}
    assert repeated_names({"headers": []}) == frozenset()
