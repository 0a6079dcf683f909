"""Hand-written JSON Schema for a tool's input (``@tool(input_schema={...})``).

Core 2026-07-28 lets ``Tool.inputSchema`` use any JSON Schema 2020-12 keyword as long as
its root is ``type: "object"`` (server/tools.mdx). A declared schema is published
unchanged (no keyword stripped, no ``$ref`` resolved) and every call is checked against
it with ``jsonschema``'s 2020-12 validator, so what the model reads is what is enforced.
Its references are resolved when it is declared, never fetched (:mod:`.schema_refs`).
``jsonschema`` is an optional dependency: ``pip install django-mcp[jsonschema]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django_mcp.exceptions import InvalidDeclaration, ToolError

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _validator_class() -> Any:
    try:
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise InvalidDeclaration(
            "input_schema needs the jsonschema package: pip install django-mcp[jsonschema]"
        ) from exc
    return Draft202012Validator


class InputSchema:
    """A checked 2020-12 schema and the validator that enforces it on every call."""

    def __init__(self, schema: Mapping[str, Any], owner: str) -> None:
        validator_class = _validator_class()
        from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

        if schema.get("type") != "object":
            raise InvalidDeclaration(f"{owner}: input_schema must have type 'object' at its root")
        dialect = schema.get("$schema", DIALECT)
        if dialect != DIALECT:
            raise InvalidDeclaration(
                f"{owner}: input_schema must be JSON Schema 2020-12 ({DIALECT})"
            )
        try:
            validator_class.check_schema(schema)
        except SchemaError as exc:
            raise InvalidDeclaration(f"{owner}: input_schema is invalid: {exc.message}") from exc
        from django_mcp.declarations.schema_refs import check_references, offline_registry

        check_references(schema, owner)
        self.schema = dict(schema)
        # Never the default registry, which fetches a remote $ref over the network.
        self.validator = validator_class(self.schema, registry=offline_registry())

    def validate(self, tool: str, arguments: Mapping[str, Any]) -> None:
        """Raise :class:`ToolError` naming every violation (a tool execution error)."""
        errors = sorted(self.validator.iter_errors(dict(arguments)), key=lambda e: list(e.path))
        if not errors:
            return
        parts = []
        for error in errors:
            location = ".".join(str(item) for item in error.absolute_path) or "arguments"
            parts.append(f"{location}: {error.message}")
        raise ToolError(f"Invalid arguments for tool {tool}: " + "; ".join(parts))
