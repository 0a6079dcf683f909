"""The tools a ``ModelTools`` declares: names, descriptions, annotations and schemas.

Input and output schemas come from the DRF serializer (:mod:`.schemas`); the list,
lookup and delete shapes are built here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.core.exceptions import FieldDoesNotExist

from django_mcp.declarations.tools import ToolAnnotations
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.modeltools.spec import ModelActionSpec

if TYPE_CHECKING:
    from django.db.models import Model

    from django_mcp.modeltools.options import ModelTools
    from django_mcp.server.context import Context

Schemas = tuple[dict[str, Any], dict[str, Any]]


def permission_check(tools: ModelTools, action: str, ctx: Context) -> bool:
    """The permission check of one action's tool (and of its instance resources)."""
    return tools.has_permission(ctx, action)


def build_tools(tools: ModelTools) -> list[ModelActionSpec]:
    """One tool per enabled action of ``tools``."""
    from django_mcp.modeltools.schemas import output_schema

    serializer = tools.get_serializer_class()()
    verbose, plural = str(tools.opts.verbose_name), str(tools.opts.verbose_name_plural)
    item_schema = output_schema(serializer)
    lookup_schema = _lookup_schema(tools, serializer)
    gated = tools.is_gated()
    specs = []
    for action in tools.actions:
        builder = SCHEMA_BUILDERS[action]
        in_schema, out_schema = builder(tools, serializer, item_schema, lookup_schema)
        specs.append(
            ModelActionSpec(
                func=getattr(tools, f"{action}_action"),
                name=tools.tool_name(action),
                description=tools.descriptions.get(action)
                or _describe(tools, action, verbose, plural),
                annotations=action_annotations(action),
                permission=functools.partial(permission_check, tools, action) if gated else None,
                scopes_required=tools.scopes_for(action),
                handler=getattr(tools, f"{action}_action"),
                action=action,
                action_input_schema=in_schema,
                action_output_schema=out_schema,
            )
        )
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise InvalidDeclaration(
            f"{type(tools).__qualname__}: two actions share a tool name in {names}"
        )
    return specs


def _describe(tools: ModelTools, action: str, verbose: str, plural: str) -> str:
    lookup = tools.lookup_argument
    text = {
        "list": f"List {plural}, {tools.list_per_page} per page.",
        "get": f"Get one {verbose} by its {lookup}.",
        "create": f"Create a {verbose}.",
        "update": f"Change a {verbose}, found by its {lookup}; only the given fields change.",
        "delete": f"Delete a {verbose}, found by its {lookup}.",
    }[action]
    if action == "list" and tools.search_fields:
        where = ", ".join(search_field_words(tools.model, path) for path in tools.search_fields)
        text += f" 'search' looks in: {where}."
    if action == "list" and tools.list_filter:
        text += f" Filter by: {', '.join(tools.list_filter)}."
    doc = (tools.model.__doc__ or "").strip()
    if doc and not doc.startswith(f"{tools.model.__name__}("):
        text += f" {doc}"
    return text


def search_field_words(model: type[Model], path: str) -> str:
    """A search field in words, from the verbose names along its path.

    Why: a description is read by a language model and by the people who approve its calls;
    an ORM lookup such as ``author__name`` says how the query is built, not what is searched
    (and leaks the schema). ``author__name`` becomes "author name" (the relation's verbose
    name, then the field's); a path that names no model field is shown with spaces.
    """
    words: list[str] = []
    current: type[Model] | None = model
    for part in path.lstrip("^=@$").split("__"):
        try:
            if current is None:
                raise FieldDoesNotExist(part)
            field = current._meta.get_field(part)
        except FieldDoesNotExist:
            words.append(part.replace("_", " "))
            current = None
            continue
        word = str(getattr(field, "verbose_name", part))
        if not words or words[-1] != word:
            words.append(word)
        related = field.related_model if field.is_relation else None
        current = related if isinstance(related, type) else None
    return " ".join(words)


def _lookup_schema(tools: ModelTools, serializer: Any) -> dict[str, Any]:
    from django_mcp.modeltools.schemas import serializer_schema

    prop = serializer_schema(serializer).get("properties", {}).get(tools.lookup_argument)
    if prop is None:
        field = tools.opts.get_field(tools.lookup_argument)
        kind = "integer" if field.get_internal_type().endswith("AutoField") else "string"
        prop = {"type": kind}
    return {k: v for k, v in prop.items() if k not in ("readOnly", "writeOnly", "nullable")}


def _list_schemas(
    tools: ModelTools, serializer: Any, item: dict[str, Any], lookup: dict[str, Any]
) -> Schemas:
    from django_mcp.modeltools.schemas import output_schema

    properties: dict[str, Any] = {}
    if tools.search_fields:
        properties["search"] = {
            "type": "string",
            "maxLength": tools.search_max_length,
            "description": "Text to search for.",
        }
    filters = output_schema(_filter_serializer(tools)) if tools.list_filter else {"properties": {}}
    for name in tools.list_filter:
        prop = dict(filters["properties"].get(name, {}))
        prop["description"] = f"Only rows whose {name} equals this value."
        properties[name] = prop
    properties["page"] = {
        "type": "integer",
        "minimum": 1,
        "maximum": tools.list_max_page,
        "default": 1,
    }
    properties["page_size"] = {
        "type": "integer",
        "minimum": 1,
        "maximum": tools.list_max_page_size,
        "default": tools.list_per_page,
    }
    out = {
        "type": "object",
        "properties": {
            "results": {"type": "array", "items": item},
            "count": {"type": "integer"},
            "page": {"type": "integer"},
            "hasMore": {"type": "boolean"},
        },
        "required": ["results", "count", "page", "hasMore"],
    }
    return {"type": "object", "properties": properties, "additionalProperties": False}, out


def _filter_serializer(tools: ModelTools) -> Any:
    from rest_framework import serializers

    meta = type("Meta", (), {"model": tools.model, "fields": list(tools.list_filter)})
    return type("FilterSerializer", (serializers.ModelSerializer,), {"Meta": meta})()


def _lookup_only(tools: ModelTools, lookup: dict[str, Any]) -> dict[str, Any]:
    key = tools.lookup_argument
    return {
        "type": "object",
        "properties": {key: lookup},
        "required": [key],
        "additionalProperties": False,
    }


def _get_schemas(
    tools: ModelTools, serializer: Any, item: dict[str, Any], lookup: dict[str, Any]
) -> Schemas:
    return _lookup_only(tools, lookup), item


def _create_schemas(
    tools: ModelTools, serializer: Any, item: dict[str, Any], lookup: dict[str, Any]
) -> Schemas:
    from django_mcp.modeltools.schemas import input_schema

    return input_schema(serializer), item


def _update_schemas(
    tools: ModelTools, serializer: Any, item: dict[str, Any], lookup: dict[str, Any]
) -> Schemas:
    from django_mcp.modeltools.schemas import input_schema

    schema = input_schema(serializer, partial=True)
    key = tools.lookup_argument
    schema["properties"] = {
        key: lookup,
        **{k: v for k, v in schema["properties"].items() if k != key},
    }
    schema["required"] = [key]
    return schema, item


def _delete_schemas(
    tools: ModelTools, serializer: Any, item: dict[str, Any], lookup: dict[str, Any]
) -> Schemas:
    key = tools.lookup_argument
    out = {
        "type": "object",
        "properties": {"deleted": {"type": "boolean"}, key: lookup},
        "required": ["deleted", key],
    }
    return _lookup_only(tools, lookup), out


def action_annotations(action: str) -> ToolAnnotations:
    """Behaviour hints: reads are read-only; update and delete are destructive."""
    if action in ("list", "get"):
        return ToolAnnotations(read_only=True, open_world=False)
    if action == "create":
        return ToolAnnotations(
            read_only=False, destructive=False, idempotent=False, open_world=False
        )
    return ToolAnnotations(read_only=False, destructive=True, idempotent=True, open_world=False)


SCHEMA_BUILDERS: dict[str, Callable[[ModelTools, Any, dict[str, Any], dict[str, Any]], Schemas]] = {
    "list": _list_schemas,
    "get": _get_schemas,
    "create": _create_schemas,
    "update": _update_schemas,
    "delete": _delete_schemas,
}
