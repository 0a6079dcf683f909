"""Prompt declarations (server/prompts.mdx).

A prompt function's parameters are its arguments (the client sends strings; type hints
convert and validate them), its docstring the description. It returns a ``str`` (one user
message), a :class:`Message`, or a list of messages and strings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Final, Literal, get_args

from pydantic import ValidationError

from django_mcp.declarations import content, invoke
from django_mcp.declarations.base import Declaration, check_options, describe
from django_mcp.declarations.completion import check_choices
from django_mcp.declarations.options import PromptOptions, option_names
from django_mcp.declarations.permissions import combine, normalise_scopes
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol.errors import InvalidParams

Role = Literal["user", "assistant"]
ROLES: Final = get_args(Role)
PROMPT_OPTIONS: Final = option_names(PromptOptions)


@dataclass(frozen=True)
class Message:
    """One prompt message: a role and a single content block (or text)."""

    role: Role
    content: content.ContentBlock | str

    def __post_init__(self) -> None:
        # Checked here, where a prompt builds it: the schema's PromptMessage has only these
        # roles (no "system") and one content block, and what reaches the wire is not
        # checked again.
        if self.role not in ROLES:
            raise TypeError(f"A PromptMessage role is 'user' or 'assistant', not {self.role!r}")
        if not isinstance(self.content, (str, *content.CONTENT_TYPES)):
            raise TypeError(
                "A PromptMessage holds one content block or a str, not "
                f"{type(self.content).__name__}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": content.to_blocks(self.content)[0]}


def user(value: content.ContentBlock | str) -> Message:
    """A message from the user."""
    return Message("user", value)


def assistant(value: content.ContentBlock | str) -> Message:
    """A message from the assistant."""
    return Message("assistant", value)


@dataclass(eq=False, kw_only=True)
class PromptSpec(Declaration):
    """A registered prompt: its function, arguments and wire definition."""

    completers: dict[str, Callable[..., Any]] = field(default_factory=dict)

    label: ClassVar[str] = "Prompt"
    checks_name: ClassVar[bool] = True
    model_suffix: ClassVar[str] = "prompt_arguments"

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in self.completers:
            if name not in self.signature.model.model_fields:
                raise InvalidDeclaration(
                    f"{self.registrant}: cannot complete {name!r}, which is not an argument"
                )
        for name, info in self.signature.model.model_fields.items():
            if name not in self.completers:
                check_choices(self.registrant, name, info.annotation)

    @classmethod
    def from_options(cls, func: Callable[..., Any], options: PromptOptions) -> PromptSpec:
        """Build the spec for ``@prompt(**options)`` on ``func``."""
        check_options("prompt()", options, PROMPT_OPTIONS)
        return cls(
            func=func,
            name=options.get("name") or func.__name__,
            title=options.get("title"),
            description=describe(func, options.get("description")),
            icons=options.get("icons"),
            meta=options.get("meta"),
            completers=dict(options.get("complete") or {}),
            permission=combine(options.get("permission_required"), options.get("permission")),
            scopes_required=normalise_scopes(options.get("scopes_required")),
        )

    @cached_property
    def definition(self) -> dict[str, Any]:
        data = self.display_fields({"name": self.name})
        arguments = []
        for name, info in self.signature.model.model_fields.items():
            argument: dict[str, Any] = {"name": name}
            if info.description:
                argument["description"] = info.description
            argument["required"] = info.is_required()
            arguments.append(argument)
        if arguments:
            data["arguments"] = arguments
        return data

    def render(self, arguments: Mapping[str, Any], context: Any) -> dict[str, Any]:
        """Validate ``arguments`` and call the prompt; -32602 for bad arguments."""
        model = self.signature.model
        # The schema's arguments are strings: any other value is refused before conversion,
        # and the strings are still validated, so that every bad argument is named at once.
        strings = {key: value for key, value in arguments.items() if isinstance(value, str)}
        not_strings = arguments.keys() - strings.keys()
        problems = [
            {"argument": key, "message": "Input should be a string"}
            for key in arguments
            if key in not_strings
        ]
        values = None
        try:
            values = model.model_validate(strings)
        except ValidationError as exc:
            problems += [
                {"argument": ".".join(str(p) for p in error["loc"]), "message": error["msg"]}
                for error in exc.errors(include_url=False)
                if not error["loc"] or error["loc"][0] not in not_strings  # named already
            ]
        if problems or values is None:
            listed = "; ".join(f"{item['argument']}: {item['message']}" for item in problems)
            raise InvalidParams(
                f"Invalid arguments for prompt {self.name}: {listed}", data={"errors": problems}
            )
        kwargs = {name: getattr(values, name) for name in model.model_fields}
        for name in self.signature.context_params:
            kwargs[name] = context
        result = invoke.call(self.func, _context=context, _coroutine=self.is_coroutine, **kwargs)
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
