"""``prompts/list`` and ``prompts/get`` (server/prompts.mdx).

A prompt function raising Django's ``ObjectDoesNotExist`` or ``Http404`` was given an
argument that names nothing: that is -32602 (invalid params), not an internal error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404

from django_mcp.protocol import methods
from django_mcp.protocol.errors import InvalidParams
from django_mcp.server.listing import listing

if TYPE_CHECKING:
    from django_mcp.server.context import Context
    from django_mcp.server.dispatch import MCPServer


def list_prompts(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    specs = server.site.get_prompts(context)
    return listing(server, params, context, methods.PROMPTS_LIST, "prompts", specs)


def get_prompt(server: MCPServer, params: dict[str, Any], context: Context) -> dict[str, Any]:
    name: str = params["name"]
    spec = server.site.get_prompt(name, context)
    if spec is None:
        raise InvalidParams(f"Unknown prompt: {name}", data={"name": name})
    arguments = params.get("arguments")
    if arguments is None:  # absent (null counts as absent)
        arguments = {}
    elif not isinstance(arguments, Mapping):  # [], "", 0 and false too, not just truthy ones
        raise InvalidParams("params.arguments must be an object of strings")
    try:
        return spec.render(arguments, context)
    except (ObjectDoesNotExist, Http404) as exc:
        raise InvalidParams(f"Prompt {name}: {exc}", data={"name": name}) from exc
