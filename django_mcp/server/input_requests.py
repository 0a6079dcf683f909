"""Multi round-trip requests (basic/patterns/mrtr.mdx): asking the client for input.

A handler calls ``ctx.elicit(...)``, ``ctx.sample(...)``, ``ctx.list_roots(...)`` or
``ctx.request_input({...})``. When the answer is not in this request, :class:`InputRequired`
stops the handler and the server returns ``resultType: "input_required"`` with the
``inputRequests`` and a ``requestState``. The client retries the same call with
``inputResponses``; the handler runs again from the top and, this time, gets its answers.

The server keeps nothing between rounds: answers from earlier rounds travel inside the
``requestState``, signed with ``SECRET_KEY`` (HMAC-SHA256 via ``django.core.signing``),
time-limited, and bound to the caller, the method, the target and a digest of the
arguments. A state that fails any of these checks is refused with -32602.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from django.core import signing
from pydantic import BaseModel

from django_mcp.declarations.signature import json_schema
from django_mcp.protocol.errors import InvalidParams, MissingRequiredClientCapability
from django_mcp.protocol.meta import RequestMeta

_SALT = "django_mcp.mrtr.request_state"
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
    """A flat object schema from a dict schema, a pydantic model, or ``{name: type}``."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return json_schema(schema)
    if isinstance(schema, Mapping) and schema.get("type") == "object":
        return dict(schema)
    if isinstance(schema, Mapping):
        kinds = {str: "string", int: "integer", float: "number", bool: "boolean"}
        properties = {name: {"type": kinds[kind]} for name, kind in schema.items()}
        return {"type": "object", "properties": properties, "required": list(properties)}
    raise TypeError("schema must be a JSON Schema object, a pydantic model or {name: type}")


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
        if (
            value["action"] == "accept"
            and isinstance(self.schema, type)
            and issubclass(self.schema, BaseModel)
        ):
            try:
                data = self.schema.model_validate(content or {})
            except ValueError as exc:
                raise InvalidParams(
                    f"inputResponses.{key}.content does not match the form", data={"key": key}
                ) from exc
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
        return Elicit(self.message).parse(key, value)


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
        if not (
            isinstance(value, Mapping)
            and "content" in value
            and isinstance(value.get("model"), str)
        ):
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
        if not (isinstance(value, Mapping) and isinstance(value.get("roots"), list)):
            raise InvalidParams(f"inputResponses.{key} must be a roots result", data={"key": key})
        return [dict(root) for root in value["roots"] if isinstance(root, Mapping)]


class InputRequired(Exception):
    """Raised inside a handler to end this round with ``resultType: input_required``."""

    def __init__(self, requests: Mapping[str, InputRequest]) -> None:
        super().__init__(", ".join(requests))
        self.requests = dict(requests)


@dataclass
class Binding:
    """What a ``requestState`` is bound to: who asked, for what, with which arguments."""

    principal: str
    method: str
    target: str
    arguments_digest: str

    def as_list(self) -> list[str]:
        return [self.principal, self.method, self.target, self.arguments_digest]


def arguments_digest(arguments: Any) -> str:
    canonical = json.dumps(
        arguments if arguments is not None else {}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Inputs:
    """The answers available to a handler in this round: earlier rounds' (from the signed
    state) plus this request's ``inputResponses``."""

    def __init__(
        self,
        binding: Binding,
        meta: RequestMeta,
        earlier: Mapping[str, Any],
        current: Mapping[str, Any],
    ) -> None:
        self.binding = binding
        self.meta = meta
        self.earlier = dict(earlier)
        self.current = dict(current)

    @classmethod
    def from_params(
        cls, params: Mapping[str, Any], binding: Binding, meta: RequestMeta, max_age: int
    ) -> Inputs:
        """Verify ``requestState`` and read ``inputResponses``; -32602 on anything wrong."""
        responses = params.get("inputResponses", {})
        if "inputResponses" in params and not isinstance(responses, Mapping):
            raise InvalidParams("params.inputResponses must be an object")
        state = params.get("requestState")
        earlier: Mapping[str, Any] = {}
        if state is not None:
            earlier = load_state(state, binding, max_age)
        return cls(binding, meta, earlier, responses)

    def answer(self, key: str, request: InputRequest) -> tuple[bool, Any]:
        """``(True, parsed answer)`` when ``key`` was answered, else ``(False, None)``."""
        if key in self.current:
            return True, request.parse(key, self.current[key])
        if key in self.earlier:
            return True, request.parse(key, self.earlier[key])
        return False, None

    def collect(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        """Answers for every key, or raise :class:`InputRequired` for the missing ones.

        A request type the client did not declare on this request is never sent: the call
        fails with -32021 naming the capability it needs.
        """
        answers: dict[str, Any] = {}
        missing: dict[str, InputRequest] = {}
        for key, request in requests.items():
            found, value = self.answer(key, request)
            if found:
                answers[key] = value
            else:
                missing[key] = request
        for request in missing.values():
            if not request.is_declared(self.meta):
                raise MissingRequiredClientCapability(request.required_capability())
        if missing:
            raise InputRequired(missing)
        return answers

    def next_state(self) -> str:
        """The state for the next round: every raw answer received so far, re-signed."""
        answered = {**self.earlier, **self.current}
        return dump_state(answered, self.binding)


def dump_state(answers: Mapping[str, Any], binding: Binding) -> str:
    return signing.dumps({"b": binding.as_list(), "a": dict(answers)}, salt=_SALT, compress=True)


def load_state(state: Any, binding: Binding, max_age: int) -> dict[str, Any]:
    if not isinstance(state, str):
        raise InvalidParams("params.requestState must be a string")
    try:
        payload = signing.loads(state, salt=_SALT, max_age=max_age)
    except signing.SignatureExpired as exc:
        raise InvalidParams("requestState has expired; start the request again") from exc
    except signing.BadSignature as exc:
        raise InvalidParams("requestState failed its integrity check") from exc
    if not isinstance(payload, dict) or payload.get("b") != binding.as_list():
        raise InvalidParams("requestState belongs to another request or caller")
    answers = payload.get("a")
    return dict(answers) if isinstance(answers, dict) else {}


def input_required_result(error: InputRequired, inputs: Inputs) -> dict[str, Any]:
    """The ``InputRequiredResult`` for a round that stopped on missing input."""
    return {
        "resultType": "input_required",
        "inputRequests": {key: request.to_dict() for key, request in error.requests.items()},
        "requestState": inputs.next_state(),
    }
