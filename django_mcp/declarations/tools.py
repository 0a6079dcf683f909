"""Tool declarations (server/tools.mdx): what ``@tool`` turns a function into.

A :class:`ToolSpec` holds the function, its argument model, its schemas and the wire
``Tool`` definition, computed once at registration so that listing and calling cost nothing
but a lookup.
"""

from __future__ import annotations

import copy
import inspect
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Final, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    PydanticInvalidForJsonSchema,
    PydanticSchemaGenerationError,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
)
from pydantic_core import to_jsonable_python

from django_mcp.declarations import content, invoke
from django_mcp.declarations.base import Declaration, check_options, describe
from django_mcp.declarations.json_schema import InputSchema
from django_mcp.declarations.options import TaskMode, ToolOptions, option_names
from django_mcp.declarations.permissions import combine, normalise_scopes
from django_mcp.declarations.signature import (
    json_schema,
    return_annotation,
    unusable_annotation,
)
from django_mcp.exceptions import InvalidDeclaration, ToolError
from django_mcp.protocol import jsontext
from django_mcp.protocol.header_schema import InvalidHeaderSchema
from django_mcp.protocol.header_schema import header_params as schema_header_params
from django_mcp.protocol.headers import HeaderParam

TOOL_OPTIONS: Final = option_names(ToolOptions)

#: ``structuredContent`` as text (built once, see :mod:`django_mcp.protocol.jsontext`).
_TEXT_ENCODE: Final = jsontext.encoder(ensure_ascii=False, allow_nan=False)
#: The arguments as ``json.dumps`` writes them, for the argument model's JSON validator.
_ARGUMENTS_ENCODE: Final = jsontext.encoder()

#: What ``TypeAdapter.dump_python`` passes as ``by_alias`` when not told: the core
#: serializer's own default differs on pydantic-core before 2.30 (True, not False).
_DUMP_BY_ALIAS: Final = inspect.signature(TypeAdapter.dump_python).parameters["by_alias"].default

_UNSTRUCTURED_RETURNS: Final = (str, type(None), inspect.Signature.empty, Any)


def _is_content_annotation(annotation: Any) -> bool:
    """Whether a return annotation is plain content (text, blocks), not structured output."""
    if annotation in _UNSTRUCTURED_RETURNS:
        return True
    # A ToolResult carries whatever structured content it is given: it is no schema.
    if isinstance(annotation, type) and issubclass(
        annotation, (*content.CONTENT_TYPES, content.ToolResult)
    ):
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (list, tuple, Union, types.UnionType) and args:
        return all(_is_content_annotation(arg) for arg in args if arg is not Ellipsis)
    return False


def _without_tool_result(annotation: Any) -> Any:
    """``annotation`` less the ``ToolResult`` members of a union (``Book | ToolResult``):
    a ToolResult is sent as it is (:meth:`ToolSpec.result`), so only the rest is the
    structured output whose schema is advertised."""
    if get_origin(annotation) not in (Union, types.UnionType):
        return annotation
    kept = tuple(arg for arg in get_args(annotation) if arg is not content.ToolResult)
    if not kept:
        return content.ToolResult
    return kept[0] if len(kept) == 1 else Union[kept]  # noqa: UP007 - built at run time


@dataclass(frozen=True)
class ToolAnnotations:
    """Behaviour hints (server/tools.mdx, "Tool annotations"); None leaves the default."""

    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        pairs = (
            ("title", self.title),
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        )
        return {key: value for key, value in pairs if value is not None}


@dataclass(eq=False, kw_only=True)
class ToolSpec(Declaration):
    """A registered tool: the callable, its validation model and its wire definition."""

    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    structured_output: bool | None = None
    #: None: never a task; see ``ToolOptions.task``.
    task: TaskMode | None = None
    task_inputs: Mapping[str, Any] | None = None
    declared_schema: Mapping[str, Any] | None = None

    label: ClassVar[str] = "Tool"
    checks_name: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        self.output_adapter = self.build_output_adapter()
        if self.task not in (None, "optional", "required"):
            raise InvalidDeclaration(
                f"{self.registrant}: task must be 'optional', 'required' or None"
            )
        if self.task_inputs and self.task is None:
            raise InvalidDeclaration(f"{self.registrant}: task_inputs needs task=...")
        self.hand_schema = (
            None
            if self.declared_schema is None
            else InputSchema(self.declared_schema, self.registrant)
        )
        try:  # from the schema clients read, however it was made
            self.header_params: Mapping[str, HeaderParam] = schema_header_params(self.input_schema)
        except InvalidHeaderSchema as exc:
            raise InvalidDeclaration(f"{self.registrant}: {exc}") from exc

    @classmethod
    def from_options(cls, func: Callable[..., Any], options: ToolOptions) -> ToolSpec:
        """Build the spec for ``@tool(**options)`` on ``func``."""
        check_options("tool()", options, TOOL_OPTIONS)
        return cls(
            func=func,
            name=options.get("name") or func.__name__,
            title=options.get("title"),
            description=describe(func, options.get("description")),
            annotations=ToolAnnotations(
                read_only=options.get("read_only"),
                destructive=options.get("destructive"),
                idempotent=options.get("idempotent"),
                open_world=options.get("open_world"),
            ),
            icons=options.get("icons"),
            meta=options.get("meta"),
            structured_output=options.get("structured_output"),
            task=options.get("task"),
            task_inputs=options.get("task_inputs"),
            declared_schema=options.get("input_schema"),
            permission=combine(options.get("permission_required"), options.get("permission")),
            scopes_required=normalise_scopes(options.get("scopes_required")),
        )

    @property
    def arguments_model(self) -> type[BaseModel]:
        return self.signature.model

    def build_output_adapter(self) -> TypeAdapter[Any] | None:
        """What validates and serialises the return value into ``structuredContent``."""
        if self.structured_output is False:
            return None
        annotation = _without_tool_result(return_annotation(self.func))
        if _is_content_annotation(annotation):
            if self.structured_output:
                raise InvalidDeclaration(
                    f"{self.registrant}: structured_output needs a return annotation that is "
                    "not plain content"
                )
            return None
        where = f"{self.registrant}: the return value"
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        except PydanticUserError as exc:
            raise unusable_annotation(where, annotation, exc, returned=True) from exc
        try:  # what tools/list will send, kept: a type with none is refused here
            self.__dict__["output_schema"] = json_schema(adapter, mode="serialization")
        except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema) as exc:
            raise unusable_annotation(where, annotation, exc, returned=True) from exc
        except PydanticUserError:
            pass  # a model not complete yet (rebuilt later): its schema is built when listed
        return adapter

    @cached_property
    def output_schema(self) -> dict[str, Any] | None:
        if self.output_adapter is None:
            return None
        return json_schema(self.output_adapter, mode="serialization")

    @property
    def input_schema(self) -> dict[str, Any]:
        if self.hand_schema is not None:
            return self.hand_schema.schema
        return self.signature.input_schema

    def validate(self, arguments: Mapping[str, Any]) -> None:
        """Raise :class:`ToolError` if ``arguments`` do not fit the input schema (checked
        before a task is created, so a bad call never becomes a task)."""
        self.kwargs_for(arguments)

    def kwargs_for(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The function's keyword arguments for ``arguments``, validated."""
        if self.hand_schema is not None:
            self.hand_schema.validate(self.name, arguments)
            return invoke.accepted_kwargs(self.func, own_copy(arguments))
        return self._kwargs_from_json(_ARGUMENTS_ENCODE(arguments))

    def _kwargs_from_json(self, encoded: str) -> dict[str, Any]:
        """The keyword arguments the argument model validates from ``encoded`` (the
        arguments as JSON text)."""
        try:
            # The model's core validator itself: model_validate_json adds a check of its
            # options per call (about a third of the validation's cost here).
            model = self.arguments_model.__pydantic_validator__.validate_json(encoded, strict=True)
        except ValidationError as exc:
            raise ToolError(
                f"Invalid arguments for tool {self.name}: {describe_errors(exc)}"
            ) from exc
        # Its fields' values, in their order: a pydantic model keeps exactly those in its
        # __dict__ (the argument model forbids extra fields; private ones live elsewhere).
        return dict(model.__dict__)

    def call(self, arguments: Mapping[str, Any], context: Any) -> Any:
        """Validate ``arguments`` against the input schema and run the tool.

        Invalid arguments raise :class:`ToolError` naming each field: they are tool
        execution errors the model can correct, not protocol errors (server/tools.mdx).
        """
        return self._run(self.call_kwargs(arguments, context), context)

    def call_encoded(self, arguments: Mapping[str, Any], context: Any, encoded: str | None) -> Any:
        """:meth:`call`, validating ``encoded`` instead of encoding ``arguments`` again:
        the JSON text of these very ``arguments`` that the size check wrote, when it reads
        as what validation would write (see
        :func:`~django_mcp.server.limits.check_argument_size`); None: :meth:`call`.

        Only this class's own steps take it: a spec with a hand-written schema, or of a
        subclass that overrides :meth:`call`, :meth:`call_kwargs` or :meth:`kwargs_for`,
        is called through :meth:`call`."""
        if encoded is None or self.hand_schema is not None or not self._own_steps:
            return self.call(arguments, context)
        kwargs = self._kwargs_from_json(encoded)
        for name in self.signature.context_params:
            kwargs[name] = context
        return self._run(kwargs, context)

    def _run(self, kwargs: dict[str, Any], context: Any) -> Any:
        if not self.is_coroutine:  # what invoke.call does for a def, without its call
            return self.func(**kwargs)
        return invoke.call(self.func, _context=context, _coroutine=True, **kwargs)

    #: Whether the class calls through ToolSpec's own steps (see :meth:`call_encoded`).
    _own_steps: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._own_steps = all(
            getattr(cls, step) is getattr(ToolSpec, step)
            for step in ("call", "call_kwargs", "kwargs_for")
        )

    async def acall(self, arguments: Mapping[str, Any], context: Any) -> Any:
        """:meth:`call` for an ``async def`` tool, awaited in the running task (the native
        ASGI path, which serves such calls on its event loop)."""
        return await invoke.acall(
            self.func, _context=context, **self.call_kwargs(arguments, context)
        )

    @property
    def is_async(self) -> bool:
        """Whether the function is ``async def`` and called as such (a subclass that
        overrides :meth:`call` is called through it), so it can be awaited on a loop."""
        return self.is_coroutine and type(self).call is ToolSpec.call

    def call_kwargs(self, arguments: Mapping[str, Any], context: Any) -> dict[str, Any]:
        """The validated arguments plus the ``Context`` parameters."""
        kwargs = self.kwargs_for(arguments)
        for name in self.signature.context_params:
            kwargs[name] = context
        return kwargs

    def result(self, value: Any) -> dict[str, Any]:
        """Convert what the tool returned into a ``CallToolResult``."""
        if isinstance(value, content.ToolResult):
            return value.to_dict()
        adapter = self.output_adapter
        if adapter is not None:
            # The adapter's core validator and serializer themselves (what its
            # validate_python and dump_python call): each of those adds a Python call with
            # a dozen keyword arguments, more than the work itself for a small value.
            structured = adapter.serializer.to_python(
                adapter.validator.validate_python(value), mode="json", by_alias=_DUMP_BY_ALIAS
            )
            return structured_result(structured)
        if value is None:
            return {"content": []}
        if content.is_content(value):
            return {"content": content.to_blocks(value)}
        return structured_result(to_jsonable_python(value))

    @cached_property
    def definition(self) -> dict[str, Any]:
        """The wire ``Tool`` object for ``tools/list``."""
        tool = self.display_fields({"name": self.name, "inputSchema": self.input_schema})
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        annotations = self.annotations.to_dict()
        if annotations:
            tool["annotations"] = annotations
        return tool


def describe_errors(exc: ValidationError) -> str:
    """One line naming each invalid argument, for the model to read."""
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(item) for item in error["loc"]) or "arguments"
        parts.append(f"{location}: {error['msg']}")
    return "; ".join(parts)


def own_copy(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` as a copy the tool may edit. The request's own objects are what a
    ``requestState`` is bound to when the round ends, so a function that edited one in
    place before asking for input bound the state to arguments the client never sent, and
    every retry was refused as another request's. Deep only when a value is a dict or a
    list: nothing else can be edited in place, and a deep copy costs microseconds."""
    values = dict(arguments)
    if any(isinstance(value, dict | list) for value in values.values()):
        values = copy.deepcopy(values)
    return values


def structured_result(structured: Any) -> dict[str, Any]:
    """``structuredContent`` plus the same JSON as text, for clients that read only text.

    JSON has no NaN or infinity: a result holding one cannot conform to any schema, so it
    fails here (ValueError, reported as -32603) instead of being sent as ``null``.
    """
    text = _TEXT_ENCODE(structured)
    # content.Text(text).to_dict(), without building the block to read it back.
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}
