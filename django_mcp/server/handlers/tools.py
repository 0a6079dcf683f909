"""``tools/list`` and ``tools/call`` (server/tools.mdx).

Argument validation failures and :class:`~django_mcp.exceptions.ToolError` are *tool
execution errors*: a normal result with ``isError: true`` so the model can correct itself.
Protocol failures (unknown tool, malformed params) are JSON-RPC errors raised earlier.
Arguments over ``MAX_TOOL_ARGUMENT_BYTES`` and calls over ``TOOL_TIMEOUT`` are tool
execution errors too (see :mod:`django_mcp.server.limits`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django_mcp.conf import mcp_settings
from django_mcp.declarations import content
from django_mcp.exceptions import ToolError
from django_mcp.protocol import methods
from django_mcp.protocol.errors import InvalidParams
from django_mcp.server import limits, tasking
from django_mcp.server.listing import listing

if TYPE_CHECKING:
    from django_mcp.declarations.tools import ToolSpec
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer


def list_tools(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    return listing(
        server, params, context, methods.TOOLS_LIST, "tools", server.site.get_tools(context)
    )


def tool_of(server: MCPServer, params: dict[str, Any], context: Context) -> ToolSpec:
    spec = context.site.get_tool(params["name"], context)  # the site, already unwrapped
    if spec is None:  # admission checked this; a concurrent unregister can still race it
        raise InvalidParams(f"Unknown tool: {params['name']}", data={"name": params["name"]})
    return spec


def call_tool(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    spec = tool_of(server, params, context)
    arguments = params.get("arguments") or {}
    try:
        encoded = limits.check_argument_size(spec.name, arguments)  # these arguments' JSON
        # A tool declared without task support (task=None) never runs as a task, so
        # runs_as_task is not asked; for an optional or a required one it always is.
        if spec.task is not None and tasking.runs_as_task(spec, arguments, context):
            return tasking.start(spec, arguments, context)
        if mcp_settings.TOOL_TIMEOUT is None:  # no limit: no context manager to enter
            value = spec.call_encoded(arguments, context, encoded)
        else:
            with limits.time_limit(spec.name, context):
                value = spec.call_encoded(arguments, context, encoded)
    except (ToolError, limits.LimitExceeded) as exc:
        return error_result(str(exc))
    return spec.result(value)


async def acall_tool(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    """:func:`call_tool` for an ``async def`` tool that is never a task, awaited on the
    running loop (the native ASGI path; :meth:`MCPServer.runs_on_loop` decides)."""
    spec = tool_of(server, params, context)
    arguments = params.get("arguments") or {}
    try:
        limits.check_argument_size(spec.name, arguments)
        with limits.time_limit(spec.name, context):
            value = await spec.acall(arguments, context)
    except (ToolError, limits.LimitExceeded) as exc:
        return error_result(str(exc))
    return spec.result(value)


def error_result(message: str) -> dict[str, Any]:
    """A tool execution error: a normal result with ``isError`` the model can read."""
    return {"content": [content.Text(message).to_dict()], "isError": True}
