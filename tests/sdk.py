"""One session of the official MCP Python SDK client (``mcp``) against a live server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from mcp import Client

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import mcp_types as types


def run_sdk_client(
    url: str,
    body: Callable[[Client], Awaitable[Any]],
    *,
    client_info: types.Implementation,
    read_timeout_seconds: float,
    deadline: float | None = None,
    **options: Any,
) -> Any:
    """Open an auto-mode client on ``url`` (response cache off; ``options`` go to ``Client``)
    and run ``body`` with it, the whole session bounded by ``deadline`` seconds if given."""

    async def main() -> Any:
        with anyio.fail_after(deadline):
            async with Client(
                url,
                mode="auto",
                client_info=client_info,
                cache=None,
                read_timeout_seconds=read_timeout_seconds,
                **options,
            ) as client:
                return await body(client)

    return anyio.run(main)
