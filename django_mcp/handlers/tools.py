"""``tools/list`` and ``tools/call`` (server/tools.mdx).

Argument validation failures and :class:`~django_mcp.exceptions.ToolError` are *tool
execution errors*: a normal result with ``isError: true`` so the model can correct itself.
Protocol failures (unknown tool, malformed params) are JSON-RPC errors raised earlier.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from .. import content, invoke
from ..conf import mcp_settings
from ..exceptions import ToolError
from ..pagination import paginate
from ..protocol import methods
from ..protocol.errors import InvalidParams

if TYPE_CHECKING:
    from ..context import Context
    from ..declarations import ToolSpec
    from ..server import MCPServer


def list_tools(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    tools = server.site.get_tools(context)
    page, next_cursor = paginate(
        tools,
        params.get("cursor"),
        site_name=server.site.name,
        method=methods.TOOLS_LIST,
        page_size=int(mcp_settings.PAGE_SIZE),
    )
    result: dict[str, Any] = {
        "tools": [spec.definition for spec in page],
        "ttlMs": int(mcp_settings.LIST_TTL_MS),
        "cacheScope": server.cache_scope(),
    }
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def call_tool(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    spec = server.site.get_tool(params["name"], context)
    if spec is None:  # admission checked this; a concurrent unregister can still race it
        raise InvalidParams(f"Unknown tool: {params['name']}", data={"name": params["name"]})
    try:
        kwargs = validate_arguments(spec, params.get("arguments") or {})
    except ValidationError as exc:
        return error_result(f"Invalid arguments for tool {spec.name}: {describe_errors(exc)}")
    for name in spec.signature.context_params:
        kwargs[name] = context
    try:
        value = invoke.call(spec.func, **kwargs)
    except ToolError as exc:
        return error_result(str(exc))
    return tool_result(spec, value)


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """Validate ``arguments`` strictly against the tool's schema (JSON semantics)."""
    model = spec.arguments_model.model_validate_json(json.dumps(arguments), strict=True)
    return {name: getattr(model, name) for name in type(model).model_fields}


def describe_errors(exc: ValidationError) -> str:
    """One line naming each invalid argument, for the model to read."""
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(item) for item in error["loc"]) or "arguments"
        parts.append(f"{location}: {error['msg']}")
    return "; ".join(parts)


def error_result(message: str) -> dict[str, Any]:
    return {"content": [content.Text(message).to_dict()], "isError": True}


def tool_result(spec: ToolSpec, value: Any) -> dict[str, Any]:
    """Convert what a tool returned into a ``CallToolResult``."""
    if isinstance(value, content.ToolResult):
        return value.to_dict()
    if spec.output_adapter is not None:
        structured = spec.output_adapter.dump_python(
            spec.output_adapter.validate_python(value), mode="json"
        )
        return structured_result(structured)
    if value is None:
        return {"content": []}
    if content.is_content(value):
        return {"content": content.to_blocks(value)}
    return structured_result(to_jsonable_python(value))


def structured_result(structured: Any) -> dict[str, Any]:
    """``structuredContent`` plus the same JSON as text, for clients that read only text."""
    text = json.dumps(structured, ensure_ascii=False)
    return {"content": [content.Text(text).to_dict()], "structuredContent": structured}
