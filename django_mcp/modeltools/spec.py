"""``ModelActionSpec``: a tool whose schemas come from a serializer, not a signature."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict, TypeAdapter, create_model
from pydantic_core import to_jsonable_python

from django_mcp.declarations.signature import Signature
from django_mcp.declarations.tools import ToolSpec, own_copy, structured_result


@dataclass(eq=False, kw_only=True)
class ModelActionSpec(ToolSpec):
    """One action of a :class:`~django_mcp.modeltools.ModelTools` exposed as a tool."""

    handler: Callable[[Mapping[str, Any], Any], Any] | None = None
    action: str = ""
    action_input_schema: dict[str, Any] = field(default_factory=dict)
    action_output_schema: dict[str, Any] | None = None

    @property
    def registrant(self) -> str:
        """The user's ``ModelTools`` subclass and the action method, for error messages."""
        owner = getattr(self.func, "__self__", None)
        if owner is None:
            return super().registrant
        cls = type(owner)
        return f"{cls.__module__}.{cls.__qualname__}.{self.func.__name__}"

    def build_signature(self) -> Signature:
        """The action's schemas come from its serializer: its arguments are checked by
        the action itself, so the model accepts any object and injects nothing."""
        return Signature(
            model=create_model(
                f"{self.name}_{self.model_suffix}", __config__=ConfigDict(extra="allow")
            ),
            input_schema=self.action_input_schema,
            context_params=(),
        )

    def build_output_adapter(self) -> TypeAdapter[Any] | None:
        """Results are serializer data, converted by :meth:`result`."""
        return None

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self.action_output_schema

    def call(self, arguments: Mapping[str, Any], context: Any) -> Any:
        """Run the action on a copy of ``arguments`` (:func:`own_copy`): an action or a
        ``perform_*`` hook that edits them (or the serializer's data, which shares their
        nested values) before ``ctx.elicit`` would bind the ``requestState`` to arguments
        the client never sent, and every retry would be refused."""
        assert self.handler is not None
        return self.handler(own_copy(arguments), context)

    def result(self, value: Any) -> dict[str, Any]:
        return structured_result(to_jsonable_python(value))
