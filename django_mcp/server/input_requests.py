"""Input requests (basic/patterns/mrtr.mdx): what a handler may ask the client.

A handler calls ``ctx.elicit(...)``, ``ctx.sample(...)``, ``ctx.list_roots(...)`` or
``ctx.request_input({...})`` with these request types; each knows its wire form, the client
capability it needs and how to read the client's answer. How answers travel between rounds
is :mod:`django_mcp.server.input_rounds`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from django_mcp.declarations.signature import json_schema
from django_mcp.protocol.errors import InvalidParams
from django_mcp.protocol.meta import RequestMeta
from django_mcp.protocol.sampling import is_create_message_result
from django_mcp.server.form_schema import flat_form

ElicitAction = Literal["accept", "decline", "cancel"]


class InputRequest:
    """Something the server asks the client for, as a bare ``{method, params}`` object."""

    method: str = ""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def required_capability(self) -> dict[str, Any]:
        """The client capability this request needs, as a ``ClientCapabilities`` object."""
        raise NotImplementedError

    def is_declared(self, meta: RequestMeta) -> bool:
        raise NotImplementedError

    def parse(self, key: str, value: Any) -> Any:
        """Validate the client's response; -32602 if it is not of the right shape."""
        raise NotImplementedError

    def question(self) -> Any:
        """What an answer to this request answers: its wire form, less an elicitation's
        ``message`` (a handler may reword a question it asks again under one key; the
        form, or the URL, is what the answer is to). Two asks of one key in one handler
        execution must have equal questions, or the one answer would serve both."""
        asked = self.to_dict()
        params = {k: v for k, v in asked["params"].items() if k != "message"}
        return {"method": asked["method"], "params": params}


@dataclass(frozen=True)
class ElicitResult:
    """The user's answer to an elicitation: ``accept`` (with ``content``), ``decline`` or
    ``cancel``. ``data`` is ``content`` parsed into the pydantic model, if one was given."""

    action: ElicitAction
    content: dict[str, Any] | None = None
    data: Any = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


def requested_schema(schema: Any) -> dict[str, Any]:
    """A flat object schema from a dict schema, a pydantic model (its optional and ``Enum``
    fields spelled as flat primitives: :func:`.form_schema.flat_form`), or ``{name: type}``."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return flat_form(json_schema(schema))
    if isinstance(schema, Mapping) and schema.get("type") == "object":
        return dict(schema)
    if isinstance(schema, Mapping):
        kinds = {str: "string", int: "integer", float: "number", bool: "boolean"}
        properties = {name: {"type": kinds[kind]} for name, kind in schema.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    raise TypeError("schema must be a JSON Schema object, a pydantic model or {name: type}")


def _fits_type(value: Any, kind: Any) -> bool:
    """Whether ``value`` is of the JSON Schema ``type`` ``kind`` (a name or a list of names;
    a boolean is no number, a whole float is an integer); an unknown kind fits anything."""
    if isinstance(kind, list):
        return any(_fits_type(value, one) for one in kind)
    if kind == "null":
        return value is None
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        return whole and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _one_of(value: Any, choices: Any) -> bool:
    """``value`` among ``choices`` by type and value (``True`` is not ``1``)."""
    return any(type(choice) is type(value) and choice == value for choice in choices)


def _fits_field(value: Any, field: Mapping[str, Any]) -> bool:
    """The checks of an elicitation form's field (client/elicitation.mdx, "Requested Schema":
    primitives, single-select ``enum`` or ``oneOf`` of ``const``, multi-select arrays of
    ``items.enum`` or ``items.anyOf``). An array's items are checked against ``items``
    like a field: its ``type`` too, so ``[{...}]`` does not pass for a list of strings."""
    if not _fits_type(value, field.get("type")):
        return False
    choices = _choices(field)
    if choices is not None and not _one_of(value, choices):
        return False
    if not _within_bounds(value, field):
        return False
    items = field.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return all(_fits_field(item, items) for item in value)
    return True


def _within_bounds(value: Any, field: Mapping[str, Any]) -> bool:
    """Whether ``value`` keeps to the bounds its field declares (client/elicitation.mdx,
    "Requested Schema": a string's length, a number's value, a multi-select's item count):
    an age of 17 must not reach a tool that asked for 18 or more. A number is compared as
    it is (10**400 is no float); a bound that is no number is no bound (the form is the
    server's own; a boolean is no number)."""
    measure: int | float
    if isinstance(value, str):
        measure, low, high = len(value), "minLength", "maxLength"
    elif isinstance(value, list):
        measure, low, high = len(value), "minItems", "maxItems"
    elif _fits_type(value, "number"):
        measure, low, high = value, "minimum", "maximum"
    else:
        return True
    lower: Any = field.get(low)
    upper: Any = field.get(high)
    below = _fits_type(lower, "number") and measure < lower
    above = _fits_type(upper, "number") and measure > upper
    return not (below or above)


def _choices(schema: Mapping[str, Any]) -> list[Any] | None:
    """The values a field allows, from ``enum`` or from ``oneOf``/``anyOf`` of ``const``."""
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list) and all(
            isinstance(option, Mapping) and "const" in option for option in options
        ):
            return [option["const"] for option in options]
    return None


def _check_form(key: str, content: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """-32602 unless ``content`` fills the flat form ``schema``: every required field, each
    of its type and among its choices (:func:`_fits_field`). A pydantic form is checked by
    its model instead; fields the form does not name are left to the handler."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else []:
        if isinstance(name, str) and name not in content:
            raise InvalidParams(
                f"inputResponses.{key}.content.{name} is required by the form", data={"key": key}
            )
    for name, value in content.items():
        field_schema = properties.get(name)
        if isinstance(field_schema, Mapping) and not _fits_field(value, field_schema):
            raise InvalidParams(
                f"inputResponses.{key}.content.{name} does not match the form", data={"key": key}
            )


def _check_unnamed(key: str, content: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """-32602 unless each field the form does not name holds a value a form can (schema.json,
    ``ElicitResult.content``: a string, number, boolean or array of strings; the form is
    flat). Such fields are the handler's to check, but as form values, not as any JSON."""
    properties = schema.get("properties")
    named = properties if isinstance(properties, Mapping) else {}
    for name, value in content.items():
        if name not in named and not _is_form_value(value):
            raise InvalidParams(
                f"inputResponses.{key}.content.{name} is not a form value", data={"key": key}
            )


def _is_form_value(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(item, str) for item in value)
    return isinstance(value, str | bool) or _fits_type(value, "number")


@dataclass(frozen=True)
class Elicit(InputRequest):
    """Ask the user to fill a form (``elicitation/create``, form mode)."""

    message: str
    schema: Any = None
    method: str = field(default="elicitation/create", init=False)

    def to_dict(self) -> dict[str, Any]:
        schema = requested_schema(self.schema if self.schema is not None else {})
        return {
            "method": self.method,
            "params": {"message": self.message, "requestedSchema": schema},
        }

    def required_capability(self) -> dict[str, Any]:
        return {"elicitation": {}}

    def is_declared(self, meta: RequestMeta) -> bool:
        capability = meta.client_capabilities.get("elicitation")
        if not isinstance(capability, Mapping):
            return False
        return not capability or isinstance(capability.get("form"), Mapping)

    def parse(self, key: str, value: Any) -> ElicitResult:
        if not isinstance(value, Mapping) or value.get("action") not in (
            "accept",
            "decline",
            "cancel",
        ):
            raise InvalidParams(
                f"inputResponses.{key} must be an elicitation result", data={"key": key}
            )
        content = value.get("content")
        if content is not None and not isinstance(content, Mapping):
            raise InvalidParams(
                f"inputResponses.{key}.content must be an object", data={"key": key}
            )
        data = None
        if value["action"] == "accept":
            _check_unnamed(key, content or {}, requested_schema(self.schema or {}))
            if isinstance(self.schema, type) and issubclass(self.schema, BaseModel):
                try:
                    data = self.schema.model_validate(content or {})
                except ValueError as exc:
                    raise InvalidParams(
                        f"inputResponses.{key}.content does not match the form",
                        data={"key": key},
                    ) from exc
            else:
                _check_form(key, content or {}, requested_schema(self.schema or {}))
        if value["action"] != "accept":  # content is only an accepted form's
            return ElicitResult(value["action"])
        return ElicitResult(value["action"], dict(content) if content is not None else None, data)


@dataclass(frozen=True)
class ElicitURL(InputRequest):
    """Send the user to a URL (``elicitation/create``, URL mode); ``accept`` only means the
    user agreed to open it."""

    message: str
    url: str
    method: str = field(default="elicitation/create", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "params": {"mode": "url", "message": self.message, "url": self.url},
        }

    def required_capability(self) -> dict[str, Any]:
        return {"elicitation": {"url": {}}}

    def is_declared(self, meta: RequestMeta) -> bool:
        capability = meta.client_capabilities.get("elicitation")
        return isinstance(capability, Mapping) and isinstance(capability.get("url"), Mapping)

    def parse(self, key: str, value: Any) -> ElicitResult:
        """The action alone: a URL-mode answer carries no content (client/elicitation.mdx,
        "Response Actions"), so whatever a client sends as one never reaches the handler."""
        return ElicitResult(Elicit(self.message).parse(key, value).action)


@dataclass(frozen=True)
class Sample(InputRequest):
    """Ask the client's model for a completion (``sampling/createMessage``, deprecated)."""

    messages: list[dict[str, Any]]
    max_tokens: int = 1000
    system_prompt: str | None = None
    method: str = field(default="sampling/createMessage", init=False)

    def to_dict(self) -> dict[str, Any]:
        params: dict[str, Any] = {"messages": self.messages, "maxTokens": self.max_tokens}
        if self.system_prompt is not None:
            params["systemPrompt"] = self.system_prompt
        return {"method": self.method, "params": params}

    def required_capability(self) -> dict[str, Any]:
        return {"sampling": {}}

    def is_declared(self, meta: RequestMeta) -> bool:
        return meta.has_capability("sampling")

    def parse(self, key: str, value: Any) -> dict[str, Any]:
        """A ``CreateMessageResult``, every member the schema types checked, nested blocks
        included (:func:`~django_mcp.protocol.sampling.is_create_message_result`);
        anything else would reach the handler as the answer and fail there
        (``result["content"]["text"]`` of a number)."""
        if not is_create_message_result(value):
            raise InvalidParams(
                f"inputResponses.{key} must be a sampling result", data={"key": key}
            )
        return dict(value)


@dataclass(frozen=True)
class ListRoots(InputRequest):
    """Ask for the client's roots (``roots/list``, deprecated)."""

    method: str = field(default="roots/list", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "params": {}}

    def required_capability(self) -> dict[str, Any]:
        return {"roots": {}}

    def is_declared(self, meta: RequestMeta) -> bool:
        return meta.has_capability("roots")

    def parse(self, key: str, value: Any) -> list[dict[str, Any]]:
        """The roots, each a ``Root`` of the schema: an object with a ``uri`` string that
        starts with ``file://`` (schema.json: it "*must* start with ``file://`` for now")
        and, if present, a string ``name``; anything else refuses the whole answer, so a
        tool that joins a root to a path never sees an ``http://`` or ``../`` "root"."""
        roots = value.get("roots") if isinstance(value, Mapping) else None
        if not (isinstance(roots, list) and all(map(_is_root, roots))):
            raise InvalidParams(f"inputResponses.{key} must be a roots result", data={"key": key})
        return [dict(root) for root in roots]


def _is_root(root: Any) -> bool:
    return (
        isinstance(root, Mapping)
        and isinstance(root.get("uri"), str)
        and root["uri"].startswith("file://")
        and isinstance(root.get("name", ""), str)
    )


def shape_of(asked: Any) -> InputRequest | None:
    """The request a task listed (its stored wire form), rebuilt as far as checking the
    shape of an answer goes: ``tasks/update`` refuses a wrong answer before it is stored.
    An elicitation keeps its ``requestedSchema`` (a pydantic form's model is gone: the
    task's own run checks the content against it when it resumes)."""
    method = asked.get("method") if isinstance(asked, Mapping) else None
    params = asked.get("params") if isinstance(asked, Mapping) else None
    params = params if isinstance(params, Mapping) else {}
    if method == "elicitation/create":
        schema = params.get("requestedSchema")
        return Elicit("", schema if isinstance(schema, Mapping) else None)
    if method == "sampling/createMessage":
        return Sample([])
    if method == "roots/list":
        return ListRoots()
    return None
