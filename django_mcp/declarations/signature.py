"""JSON Schemas from type hints: a function's signature becomes a pydantic model.

The model validates arguments (so the advertised ``inputSchema`` and the validation are one
thing), and its JSON Schema is the tool's ``inputSchema``. A parameter annotated with
:class:`~django_mcp.server.context.Context` is injected by the server and never part of the
schema.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from django.db.models import Model as DjangoModel
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PydanticInvalidForJsonSchema,
    PydanticSchemaGenerationError,
    PydanticUserError,
    TypeAdapter,
    create_model,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

from django_mcp.declarations.source import registrant
from django_mcp.exceptions import InvalidDeclaration


@dataclass(frozen=True, slots=True)
class MCPHeader:
    """Mark a tool parameter to be mirrored in the ``Mcp-Param-{name}`` HTTP header.

    Use as ``region: Annotated[str, MCPHeader("Region")]``. Only string, integer and boolean
    parameters qualify, and never secrets: intermediaries see headers.
    """

    name: str


class _NoTitles(GenerateJsonSchema):
    """Drop pydantic's generated ``title`` keys: they repeat the names and cost tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: Any, mode: Any = "validation") -> JsonSchemaValue:
        result = super().generate(schema, mode=mode)
        result.pop("title", None)
        return result


def json_schema(
    adapter: TypeAdapter[Any] | type[BaseModel], mode: str = "validation"
) -> dict[str, Any]:
    """The JSON Schema 2020-12 of a model or type adapter, without generated titles."""
    if isinstance(adapter, TypeAdapter):
        return adapter.json_schema(schema_generator=_NoTitles, mode=mode)  # type: ignore[arg-type]
    return adapter.model_json_schema(schema_generator=_NoTitles, mode=mode)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Signature:
    """What the server needs to call a function: its argument model and injected params."""

    model: type[BaseModel]
    input_schema: dict[str, Any]
    context_params: tuple[str, ...]
    #: Parameters without a type hint: accepted as any JSON value, which gives the model no
    #: schema to go by (system check ``django_mcp.W011`` lists them).
    unhinted: tuple[str, ...] = ()


class Injected:
    """Base of the types a handler receives by annotating a parameter, never from the
    client's arguments: :class:`~django_mcp.server.context.Context` subclasses it.

    Signatures only need to recognise it, so this layer does not import the server that
    provides the context.
    """


def _is_injected(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Injected)


def is_context_annotation(annotation: Any) -> bool:
    """Whether ``annotation`` is ``Context`` (or ``Context | None``)."""
    return _is_injected(annotation) or any(_is_injected(arg) for arg in get_args(annotation))


def resolved_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """Type hints of ``func`` with ``Annotated`` metadata kept, strings resolved."""
    try:
        return typing.get_type_hints(func, include_extras=True)
    except (NameError, TypeError) as exc:
        raise InvalidDeclaration(
            f"Cannot resolve the type hints of {func.__qualname__}: {exc}"
        ) from exc


def build_signature(func: Callable[..., Any], *, model_name: str) -> Signature:
    """Inspect ``func`` and build its argument model, schema and injected parameters."""
    hints = resolved_hints(func)
    fields: dict[str, Any] = {}
    context_params: list[str] = []
    unhinted: list[str] = []
    for name, param in inspect.signature(func).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise InvalidDeclaration(
                f"{func.__qualname__}: *args and **kwargs cannot be tool arguments"
            )
        if name not in hints:
            unhinted.append(name)
        annotation = hints.get(name, Any)
        if is_context_annotation(annotation):
            context_params.append(name)
            continue
        if name.startswith("_"):
            raise InvalidDeclaration(f"{func.__qualname__}: argument names may not start with '_'")
        if name == "model_config":  # pydantic reads it as the model's configuration
            raise InvalidDeclaration(
                f"{func.__qualname__}: argument name 'model_config' is pydantic's own: rename it"
            )
        header = _header_marker(annotation)
        default = ... if param.default is param.empty else param.default
        if header is not None:  # read back from the schema, as a hand-written one is
            annotation = Annotated[
                annotation, Field(json_schema_extra={"x-mcp-header": header.name})
            ]
        _check_supported(func, name, annotation)
        fields[name] = (annotation, default)
    try:
        model = create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    except (ValueError, TypeError) as exc:  # a name pydantic's BaseModel keeps for itself
        raise InvalidDeclaration(f"{func.__qualname__}: {exc} Rename the argument.") from exc
    schema = json_schema(model)
    if not fields:
        schema = {"type": "object", "additionalProperties": False}
    return Signature(model, schema, tuple(context_params), tuple(unhinted))


def _check_supported(func: Callable[..., Any], name: str, annotation: Any) -> None:
    """Refuse a parameter type pydantic cannot validate or describe, naming the function,
    the parameter and a fix (pydantic's own message suggests ``arbitrary_types_allowed``,
    which would give the model no schema and accept anything)."""
    try:
        TypeAdapter(annotation).json_schema()
    except PydanticUserError as exc:
        where = f"{registrant(func)}: parameter {name!r}"
        raise unusable_annotation(where, annotation, exc, returned=False) from exc


def unusable_annotation(
    where: str, annotation: Any, exc: PydanticUserError, *, returned: bool
) -> InvalidDeclaration:
    """The declaration error for an annotation pydantic refused (``where`` names the
    declaration and the parameter or return value): a type with no JSON Schema gets a fix
    a Django project can use, any other refusal pydantic's own reason (``typing.TypedDict``
    before Python 3.12, say)."""
    kind = annotation.__name__ if isinstance(annotation, type) else repr(annotation)
    if not isinstance(exc, (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema)):
        return InvalidDeclaration(f"{where} is annotated {kind}, which pydantic cannot use: {exc}")
    if _names_a_django_model(annotation):
        hint = (
            "return a dict, a pydantic model or a REST framework serializer's data instead, "
            "or expose the model with ModelTools"
            if returned
            else "take the primary key (int or str) and look the object up in the function, "
            "or expose the model with ModelTools"
        )
    else:
        hint = (
            "use a JSON-friendly type: str, int, float, bool, a list or dict of them, "
            "a pydantic model, a dataclass, a TypedDict, Literal or an Enum"
        )
    return InvalidDeclaration(f"{where} is annotated {kind}, which has no JSON Schema; {hint}.")


def _names_a_django_model(annotation: Any) -> bool:
    """Whether ``annotation`` is a Django model or holds one (``list[Book]``,
    ``Book | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, DjangoModel):
        return True
    return any(_names_a_django_model(arg) for arg in get_args(annotation))


def _header_marker(annotation: Any) -> MCPHeader | None:
    if get_origin(annotation) is Annotated:
        for extra in annotation.__metadata__:
            if isinstance(extra, MCPHeader):
                return extra
    return None


def return_annotation(func: Callable[..., Any]) -> Any:
    """The declared return type of ``func``, or ``inspect.Signature.empty``."""
    return resolved_hints(func).get("return", inspect.Signature.empty)
