"""``ModelActionSpec``: a tool whose schemas come from a serializer, not a signature."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_jsonable_python

from django_mcp.declarations.tools import TOOL_NAME, ToolSpec, structured_result
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol.headers import HeaderParam


@dataclass(eq=False)
class ModelActionSpec(ToolSpec):
    """One action of a :class:`~django_mcp.modeltools.ModelTools` exposed as a tool."""

    handler: Callable[[Mapping[str, Any], Any], Any] | None = None
    action: str = ""
    action_input_schema: dict[str, Any] = field(default_factory=dict)
    action_output_schema: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not TOOL_NAME.match(self.name):
            raise InvalidDeclaration(
                f"Tool name {self.name!r} ({self.registrant}) must be 1-128 characters "
                "of A-Z, a-z, 0-9, '_', '-' and '.'"
            )
        self.output_adapter = None

    @property
    def header_params(self) -> Mapping[str, HeaderParam]:
        return {}

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.action_input_schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self.action_output_schema

    def call(self, arguments: Mapping[str, Any], context: Any) -> Any:
        assert self.handler is not None
        return self.handler(arguments, context)

    def result(self, value: Any) -> dict[str, Any]:
        return structured_result(to_jsonable_python(value))
