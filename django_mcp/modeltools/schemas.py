"""JSON Schemas (2020-12) for DRF serializers, for ``ModelTools`` input and output.

DRF's OpenAPI generator already knows how every serializer field maps to a schema; its
output is OpenAPI 3.0, so ``nullable: true`` becomes a ``"null"`` type, and the
read-only/write-only flags split it into an input schema and an output schema.
"""

from __future__ import annotations

import copy
from typing import Any

from rest_framework import serializers
from rest_framework.schemas.openapi import AutoSchema

_OPENAPI_ONLY = ("readOnly", "writeOnly", "nullable", "example")


def _convert(schema: dict[str, Any]) -> dict[str, Any]:
    """One property schema from OpenAPI 3.0 to JSON Schema 2020-12."""
    result = {key: value for key, value in schema.items() if key not in _OPENAPI_ONLY}
    if schema.get("nullable"):
        if "type" in result:
            result["type"] = [result["type"], "null"]
        elif "enum" in result:
            result["enum"] = [*result["enum"], None]
    if "items" in result and isinstance(result["items"], dict):
        result["items"] = _convert(result["items"])
    if "properties" in result:
        result["properties"] = {k: _convert(v) for k, v in result["properties"].items()}
    return result


def serializer_schema(serializer: serializers.BaseSerializer[Any]) -> dict[str, Any]:
    """DRF's OpenAPI schema of ``serializer`` (both directions, flags kept)."""
    return copy.deepcopy(AutoSchema().map_serializer(serializer))


def input_schema(
    serializer: serializers.BaseSerializer[Any], *, partial: bool = False
) -> dict[str, Any]:
    """The writable fields as an object schema; with ``partial`` nothing is required."""
    schema = serializer_schema(serializer)
    properties = {
        name: _convert(prop)
        for name, prop in schema.get("properties", {}).items()
        if not prop.get("readOnly")
    }
    result: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in schema.get("required", []) if name in properties]
    if required and not partial:
        result["required"] = required
    result["additionalProperties"] = False
    return result


def output_schema(serializer: serializers.BaseSerializer[Any]) -> dict[str, Any]:
    """The readable fields as an object schema; every one is present in the output."""
    schema = serializer_schema(serializer)
    properties = {
        name: _convert(prop)
        for name, prop in schema.get("properties", {}).items()
        if not prop.get("writeOnly")
    }
    return {"type": "object", "properties": properties, "required": list(properties)}
