"""``completion/complete`` (server/utilities/completion.mdx) for prompt arguments and
resource-template variables.

A NUL character in ``argument.value`` or in ``context.arguments`` completes to nothing
without calling the completer: no value holding one can be completed, and a completer that
queries the database would fail on it (PostgreSQL refuses NUL in text)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django_mcp.declarations.completion import completer_for, run_completer
from django_mcp.protocol.errors import InvalidParams

if TYPE_CHECKING:
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer


def complete(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, Mapping):
        raise InvalidParams("params.ref is required and must be an object")
    if not (
        isinstance(argument, Mapping)
        and isinstance(argument.get("name"), str)
        and isinstance(argument.get("value"), str)
    ):
        raise InvalidParams("params.argument must be an object with string name and value")
    earlier = _earlier_arguments(params.get("context"))
    spec = _referenced(server, ref, context)
    names = (
        spec.template.variables
        if hasattr(spec, "template")
        else tuple(spec.signature.model.model_fields)
    )
    if argument["name"] not in names:
        raise InvalidParams(f"Unknown argument: {argument['name']}")
    if "\x00" in argument["value"] or any("\x00" in value for value in earlier.values()):
        return {"completion": {"values": [], "total": 0, "hasMore": False}}
    completer = completer_for(argument["name"], spec.completers, spec.signature.model.model_fields)
    completion = run_completer(
        completer,
        argument=argument["name"],
        value=argument["value"],
        arguments=earlier,
        context=context,
    )
    return {"completion": completion}


def _earlier_arguments(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    arguments = value.get("arguments", {}) if isinstance(value, Mapping) else None
    if not isinstance(arguments, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in arguments.items()
    ):
        raise InvalidParams("params.context.arguments must map names to strings")
    return dict(arguments)


def _referenced(server: MCPServer, ref: Mapping[str, Any], context: Context) -> Any:
    kind = ref.get("type")
    if kind == "ref/prompt" and isinstance(ref.get("name"), str):
        spec = server.site.get_prompt(ref["name"], context)
        if spec is None:
            raise InvalidParams(f"Unknown prompt: {ref['name']}", data={"name": ref["name"]})
        return spec
    if kind == "ref/resource" and isinstance(ref.get("uri"), str):
        for template in server.site.get_resource_templates(context):
            if template.uri == ref["uri"]:
                return template
        raise InvalidParams(f"Unknown resource template: {ref['uri']}", data={"uri": ref["uri"]})
    raise InvalidParams(
        'params.ref must be {"type": "ref/prompt", "name"} or {"type": "ref/resource", "uri"}'
    )
