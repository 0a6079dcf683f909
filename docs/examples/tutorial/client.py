"""Call the bookshop's tools with the official MCP Python SDK.

Usage: python client.py [URL]     (default http://127.0.0.1:8000/mcp)
"""

import sys

import anyio
import mcp_types as types
from mcp import Client

URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp"


async def main() -> None:
    info = types.Implementation(name="bookshop-client", version="1.0")
    async with Client(URL, mode="auto", client_info=info) as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(sorted(tool.name for tool in tools.tools)))
        found = await client.call_tool("search_books", {"query": "dune"})
        print("search_books:", found.structured_content)


anyio.run(main)
