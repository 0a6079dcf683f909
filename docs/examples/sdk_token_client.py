"""Call a token-gated tool of the demo with the official MCP Python SDK.

Usage, from the checkout while scripts/demo serves (URL defaults to the demo's endpoint,
http://127.0.0.1:8000/mcp):

    MCP_TOKEN=$(DJANGO_MCP_DEMO=1 .venv/bin/python manage.py mcp_create_token admin \\
        --scope books:write) .venv/bin/python docs/examples/sdk_token_client.py [URL]
"""

import os
import sys

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp"


async def main() -> None:
    # The SDK's transport takes an httpx2 client: its headers go with every request, so
    # the token travels in Authorization, never in the URL.
    headers = {"Authorization": f"Bearer {os.environ['MCP_TOKEN']}"}
    timeout = httpx2.Timeout(30, read=300)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        Client(
            streamable_http_client(URL, http_client=http),
            mode="auto",
            client_info=types.Implementation(name="bookshop-writer", version="1.0"),
            cache=None,
        ) as client,
    ):
        result = await client.call_tool("set_price", {"isbn": "9780441172719", "price": "12.50"})
        print("set_price:", result.structured_content)


anyio.run(main)
