"""JSON Schemas (2020-12) for DRF serializers, for ``ModelTools`` input and output.

DRF's OpenAPI generator already knows how most serializer fields map to a schema; its
output is OpenAPI 3.0, so ``nullable: true`` becomes a ``"null"`` type, and the
read-only/write-only flags split it into an input schema and an output schema.

Where DRF guesses, the guess is replaced (:func:`field_schema`): it calls any field it does
not know a string, and a ``JSONField`` an object. A ``SerializerMethodField`` returning a
bool, a ``ReadOnlyField`` over a number or a JSON list would then break the promise of
``outputSchema`` (server/tools.mdx: structured results MUST conform to it), and a client
that checks, as the official SDK does, refuses the result. Such a field gets the schema of
its method's return annotation when it has one, and otherwise no constraint.
"""

from __future__ import annotations

import copy
import typing
from typing import Any, Final

from django.core.validators import RegexValidator
from django.db import models
from pydantic import TypeAdapter
from rest_framework import serializers
from rest_framework.schemas.openapi import AutoSchema

from django_mcp.modeltools.patterns import ecma_pattern

_OPENAPI_ONLY = ("readOnly", "writeOnly", "nullable", "example")
#: The field attribute behind each OpenAPI flag a direction drops.
_ATTRIBUTE: Final = {"readOnly": "read_only", "writeOnly": "write_only"}


def _convert(schema: dict[str, Any]) -> dict[str, Any]:
    """One property schema from OpenAPI 3.0 to JSON Schema 2020-12."""
    result = {key: value for key, value in schema.items() if key not in _OPENAPI_ONLY}
    if isinstance(result.get("pattern"), str):
        pattern = ecma_pattern(result["pattern"])
        if pattern is None:
            del result["pattern"]
        else:
            result["pattern"] = pattern
    if schema.get("nullable"):
        if "type" in result:
            result["type"] = [result["type"], "null"]
        if "enum" in result:  # an enum binds on its own: null must be one of its values
            result["enum"] = [*result["enum"], None]
    if "items" in result and isinstance(result["items"], dict):
        result["items"] = _convert(result["items"])
    if "properties" in result:
        result["properties"] = {k: _convert(v) for k, v in result["properties"].items()}
    return result


def serializer_schema(serializer: serializers.BaseSerializer[Any]) -> dict[str, Any]:
    """DRF's OpenAPI schema of ``serializer`` (both directions, flags kept), without the
    ``pattern`` of a field whose regex validator DRF misreports: it copies the regex but
    not its ``flags`` (an ``IGNORECASE`` pattern would refuse values the server accepts)
    nor ``inverse_match`` (the schema would require exactly what the server refuses)."""
    schema = copy.deepcopy(AutoSchema().map_serializer(serializer))
    properties = schema.get("properties", {})
    for name, field in getattr(serializer, "fields", {}).items():
        if name in properties and any(_misread(v) for v in field.validators):
            properties[name].pop("pattern", None)
    return schema


def _misread(validator: Any) -> bool:
    return isinstance(validator, RegexValidator) and bool(
        validator.flags or validator.inverse_match
    )


#: Classes DRF maps to a type only when the field is of that very class.
_EXACT_TYPES: Final[dict[type, str]] = {
    serializers.BooleanField: "boolean",
    serializers.DictField: "object",
    serializers.HStoreField: "object",
}
#: What a replaced schema keeps of DRF's: the annotations it took from the field.
_KEPT: Final[tuple[str, ...]] = ("title", "description", "default")


def field_schema(field: serializers.Field[Any, Any, Any, Any]) -> dict[str, Any] | None:
    """The schema of a field whose value DRF's generator only guesses, or None to keep
    DRF's: a method field's return annotation (none: any value), a ``ReadOnlyField``, a
    ``JSONField`` (any JSON value, not only an object), a project's own field built
    directly on ``Field``, which may represent itself as anything, and a primary-key
    relation to an integer key that DRF cannot see (a read-only one has no queryset)."""
    if isinstance(field, serializers.SerializerMethodField):
        return _returns(getattr(field.parent, field.method_name or "", None))
    if isinstance(
        field,
        serializers.ReadOnlyField
        | serializers.JSONField
        | serializers.SlugRelatedField
        | serializers.ModelField,
    ):
        return {}  # any JSON value, whatever the field's slug or model field holds
    if type(field) not in _EXACT_TYPES:  # DRF maps these by exact class: a subclass is "string"
        for base, json_type in _EXACT_TYPES.items():
            if isinstance(field, base):
                return {"type": json_type}
    kind = type(field)
    if kind.__mro__[1] is serializers.Field and not kind.__module__.startswith("rest_framework"):
        return {}
    if isinstance(field, serializers.PrimaryKeyRelatedField) and field.pk_field is None:
        queryset: Any = getattr(field, "queryset", None)
        target = getattr(queryset, "model", None) or _related_model(field)
        if target is None:
            return {}
        key = target._meta.pk
        while key.remote_field is not None:  # a key that is a relation (multi-table child)
            key = key.target_field
        if isinstance(key, models.IntegerField):
            return {"type": "integer"}
    return None


def _related_model(field: serializers.Field[Any, Any, Any, Any]) -> Any:
    """The model a relation field points to, read from its serializer's model; None when
    it cannot be told. A ``many=True`` relation's child is named by its parent."""
    holder: Any = field.parent if isinstance(field.parent, serializers.ManyRelatedField) else field
    model = getattr(getattr(holder.parent, "Meta", None), "model", None)
    try:
        return model._meta.get_field(holder.source).related_model if model else None
    except Exception:  # a source that is no model field (a property, a dotted path)
        return None


def replace_guesses(schema: dict[str, Any], field: Any, *, drop: str) -> dict[str, Any]:
    """``schema`` (DRF's, converted) of ``field`` with every guess in it replaced, nested
    serializers and list children included; what DRF knows, and the annotations it took
    from the field (``description``...), stay. A replacement keeps DRF's ``null``. A
    nested serializer loses the fields that do not travel this way (``drop``:
    ``read_only`` for input, ``write_only`` for output), as the top level does."""
    replaced = field_schema(field)
    if replaced is not None:
        kept: dict[str, Any] = {key: schema[key] for key in _KEPT if key in schema}
        if isinstance(replaced.get("type"), str) and "null" in (schema.get("type") or ()):
            replaced = {**replaced, "type": [replaced["type"], "null"]}
        return {**kept, **replaced}
    child = getattr(field, "child_relation", None) or getattr(field, "child", None)
    if child is not None and isinstance(schema.get("items"), dict):
        schema["items"] = replace_guesses(schema["items"], child, drop=drop)
    properties = schema.get("properties")
    if isinstance(field, serializers.Serializer) and isinstance(properties, dict):
        for name, sub in field.fields.items():
            if name not in properties:
                continue
            if getattr(sub, drop, False):
                del properties[name]
            else:
                properties[name] = replace_guesses(properties[name], sub, drop=drop)
        if isinstance(schema.get("required"), list):
            schema["required"] = [name for name in schema["required"] if name in properties]
    return schema


def _returns(method: Any) -> dict[str, Any]:
    """The JSON Schema of ``method``'s return annotation, or ``{}`` (any value) when it
    has none, it cannot be resolved, or its schema needs definitions of its own."""
    try:
        annotation = typing.get_type_hints(method).get("return")
        if annotation is None:
            return {}
        schema: dict[str, Any] = TypeAdapter(annotation).json_schema()
    except Exception:  # an unresolvable or unsupported annotation constrains nothing
        return {}
    if "$defs" in schema or "$ref" in schema:
        return {}
    schema.pop("title", None)
    return schema


def _properties(
    serializer: serializers.BaseSerializer[Any], schema: dict[str, Any], *, drop: str
) -> dict[str, dict[str, Any]]:
    """Each property of the serializer's ``schema`` (:func:`serializer_schema`) but those
    flagged ``drop`` (``readOnly`` for input, ``writeOnly`` for output), converted, with
    DRF's guesses replaced."""
    fields = getattr(serializer, "fields", {})
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        if prop.get(drop):
            continue
        converted = _convert(prop)
        if name in fields:
            converted = replace_guesses(converted, fields[name], drop=_ATTRIBUTE[drop])
        properties[name] = converted
    return properties


def input_schema(
    serializer: serializers.BaseSerializer[Any], *, partial: bool = False
) -> dict[str, Any]:
    """The writable fields as an object schema; with ``partial`` nothing is required."""
    schema = serializer_schema(serializer)
    properties = _properties(serializer, schema, drop="readOnly")
    result: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in schema.get("required", []) if name in properties]
    if required and not partial:
        result["required"] = required
    result["additionalProperties"] = False
    return result


def output_schema(serializer: serializers.BaseSerializer[Any]) -> dict[str, Any]:
    """The readable fields as an object schema; every one is present in the output."""
    properties = _properties(serializer, serializer_schema(serializer), drop="writeOnly")
    return {"type": "object", "properties": properties, "required": list(properties)}
