"""Talk to the demo with the official MCP Python SDK (pip install "mcp==2.3.0").

Usage: python sdk_client.py [URL]     (default http://127.0.0.1:8000/mcp)
"""

import sys

import anyio
import mcp_types as types
from mcp import Client

URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000/mcp"


async def main() -> None:
    # mode="auto" (the default) sends server/discover first; a 2026-07-28 server answers it.
    # cache=None: ask the server every time instead of honouring its ttlMs.
    async with Client(
        URL,
        mode="auto",
        client_info=types.Implementation(name="bookshop-example", version="1.0"),
        cache=None,
    ) as client:
        print("protocol:", client.protocol_version)
        print("server:", client.server_info.name if client.server_info else None)

        tools = await client.list_tools()
        print("tools:", ", ".join(sorted(tool.name for tool in tools.tools)))

        found = await client.call_tool("search_books", {"query": "dune"})
        print("search_books:", found.structured_content)

        missing = await client.call_tool("get_book", {"isbn": "0000000000000"})
        print("get_book:", "isError" if missing.is_error else "ok", missing.content[0].text)

        me = await client.call_tool("whoami", {})
        print("whoami:", me.content[0].text)

        # Resources are read by URI (a template's variables filled in), prompts got by name
        # with string arguments.
        resources = await client.list_resources()
        print("resources:", ", ".join(str(resource.uri) for resource in resources.resources))
        book = await client.read_resource("books://9780441172719")
        print("books://9780441172719:", book.contents[0].text)

        prompt = await client.get_prompt("review_request", {"isbn": "9780441172719"})
        print("review_request:", prompt.messages[0].content.text)


anyio.run(main)
