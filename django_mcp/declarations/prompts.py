"""Prompt declarations (server/prompts.mdx).

A prompt function's parameters are its arguments (the client sends strings; type hints
convert and validate them), its docstring the description. It returns a ``str`` (one user
message), a :class:`Message`, or a list of messages and strings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from pydantic import ValidationError

from django_mcp.declarations import content, invoke
from django_mcp.declarations.permissions import PermissionCheck
from django_mcp.declarations.signature import build_signature
from django_mcp.declarations.tools import TOOL_NAME, registrant
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol.errors import InvalidParams

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One prompt message: a role and a single content block (or text)."""

    role: Role
    content: content.ContentBlock | str

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": content.to_blocks(self.content)[0]}


def user(value: content.ContentBlock | str) -> Message:
    """A message from the user."""
    return Message("user", value)


def assistant(value: content.ContentBlock | str) -> Message:
    """A message from the assistant."""
    return Message("assistant", value)


@dataclass(eq=False)
class PromptSpec:
    """A registered prompt: its function, arguments and wire definition."""

    func: Callable[..., Any]
    name: str
    title: str | None = None
    description: str | None = None
    icons: Sequence[Mapping[str, Any]] | None = None
    meta: Mapping[str, Any] | None = None
    completers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    permission: PermissionCheck | None = None

    def __post_init__(self) -> None:
        if not TOOL_NAME.match(self.name):
            raise InvalidDeclaration(
                f"Prompt name {self.name!r} ({self.registrant}) must be 1-128 characters of "
                "A-Z, a-z, 0-9, '_', '-' and '.'"
            )
        self.signature = build_signature(self.func, model_name=f"{self.name}_prompt_arguments")
        for name in self.completers:
            if name not in self.signature.model.model_fields:
                raise InvalidDeclaration(
                    f"{self.registrant}: cannot complete {name!r}, which is not an argument"
                )

    @property
    def registrant(self) -> str:
        return registrant(self.func)

    @cached_property
    def definition(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name}
        if self.title:
            data["title"] = self.title
        if self.description:
            data["description"] = self.description
        arguments = []
        for name, info in self.signature.model.model_fields.items():
            argument: dict[str, Any] = {"name": name}
            if info.description:
                argument["description"] = info.description
            argument["required"] = info.is_required()
            arguments.append(argument)
        if arguments:
            data["arguments"] = arguments
        if self.icons:
            data["icons"] = [dict(icon) for icon in self.icons]
        if self.meta:
            data["_meta"] = dict(self.meta)
        return data

    def render(self, arguments: Mapping[str, Any], context: Any) -> dict[str, Any]:
        """Validate ``arguments`` and call the prompt; -32602 for bad arguments."""
        model = self.signature.model
        for key, value in arguments.items():
            if not isinstance(value, str):
                raise InvalidParams(f"Prompt argument {key!r} must be a string")
        try:
            values = model.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
                for error in exc.errors(include_url=False)
            )
            raise InvalidParams(
                f"Invalid arguments for prompt {self.name}: {problems}",
                data={
                    "errors": [
                        {
                            "argument": ".".join(str(p) for p in error["loc"]),
                            "message": error["msg"],
                        }
                        for error in exc.errors(include_url=False)
                    ]
                },
            ) from exc
        kwargs = {name: getattr(values, name) for name in model.model_fields}
        for name in self.signature.context_params:
            kwargs[name] = context
        result = invoke.call(self.func, _context=context, **kwargs)
        data: dict[str, Any] = {"messages": to_messages(result)}
        if self.description:
            data["description"] = self.description
        return data


def to_messages(value: Any) -> list[dict[str, Any]]:
    """Convert a prompt's return value to ``messages``."""
    items = value if isinstance(value, list | tuple) else [value]
    messages = []
    for item in items:
        if isinstance(item, Message):
            messages.append(item.to_dict())
        elif isinstance(item, (str, *content.CONTENT_TYPES)):
            messages.append(Message("user", item).to_dict())
        else:
            raise TypeError(f"A prompt returned {type(item).__name__}; expected str or Message")
    return messages
