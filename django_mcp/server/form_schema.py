"""A pydantic form's JSON Schema in the flat shape ``requestedSchema`` allows.

client/elicitation.mdx, "Requested Schema": the form is a restricted subset of JSON
Schema, each property a ``PrimitiveSchemaDefinition`` (schema.json): a string, number,
boolean or enum schema that states its ``type``, with no ``anyOf`` and no ``$ref``. Pydantic
writes an optional field (``str | None = None``) as ``anyOf: [{type: string}, {type:
null}]`` with ``default: null``, and an ``Enum`` field as a ``$ref`` into ``$defs``: sent as
they are, the whole ``InputRequiredResult`` is outside the schema and a client may refuse
it. :func:`flat_form` inlines the references and drops the ``null`` alternative (a client
leaves an optional field out; the model still validates what it sends). A shape with no
flat spelling (a nested model, a union of two types) is left as pydantic wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

_DEFS: Final = "#/$defs/"
_NULL: Final = {"type": "null"}


def flat_form(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (a model's, from pydantic) with each property flattened."""
    definitions = schema.get("$defs")
    defs: Mapping[str, Any] = definitions if isinstance(definitions, Mapping) else {}
    flat = {key: value for key, value in schema.items() if key != "$defs"}
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        flat["properties"] = {
            name: _flat_field(field, defs) if isinstance(field, Mapping) else field
            for name, field in properties.items()
        }
    if defs and _refers(flat):  # a shape left as pydantic wrote it still needs its targets
        flat["$defs"] = definitions
    return flat


def _refers(node: Any) -> bool:
    """Whether a ``$ref`` is left anywhere in ``node``."""
    if isinstance(node, Mapping):
        return "$ref" in node or any(_refers(value) for value in node.values())
    if isinstance(node, list):
        return any(_refers(item) for item in node)
    return False


def _flat_field(field: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    flat = _inlined(field, defs)
    options = flat.get("anyOf")
    if isinstance(options, list) and _NULL in options:
        others = [option for option in options if option != _NULL]
        if len(others) == 1 and isinstance(others[0], Mapping):
            flat = {**_inlined(others[0], defs), **_without(flat, "anyOf")}
    if "default" in flat and flat["default"] is None:
        flat = _without(flat, "default")  # no primitive schema has a null default
    items = flat.get("items")
    if isinstance(items, Mapping):
        flat["items"] = _inlined(items, defs)
    return flat


def _inlined(node: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` to ``$defs`` replaced by the definition's keywords, less
    the definition's ``title`` (the class name, not a label for the field)."""
    ref = node.get("$ref")
    target = defs.get(ref.removeprefix(_DEFS)) if isinstance(ref, str) else None
    if not (isinstance(ref, str) and ref.startswith(_DEFS) and isinstance(target, Mapping)):
        return dict(node)
    definition = {key: value for key, value in target.items() if key != "title"}
    return {**definition, **_without(node, "$ref")}


def _without(node: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in node.items() if name != key}
