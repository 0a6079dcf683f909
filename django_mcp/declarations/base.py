"""What every declaration shares: the function, its name and description, display fields,
the permission check, and the signature that validates its arguments.

Tools, resources, resource templates and prompts (and ModelTools actions) are subclasses of
:class:`Declaration`, so the name rule, the signature building and the display fields are
written once. :class:`Injected` lets a signature recognise the request context without
this layer importing the server that provides it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from django_mcp.declarations.permissions import PermissionCheck
from django_mcp.declarations.signature import Signature, build_signature
from django_mcp.declarations.source import describe_origin, registrant
from django_mcp.exceptions import InvalidDeclaration

#: server/tools.mdx, "Tool names" (prompts follow the same rule): 1-128 characters of
#: A-Z a-z 0-9 _ - .
TOOL_NAME: Final = re.compile(r"\A[A-Za-z0-9_.\-]{1,128}\Z")


def describe(func: Callable[..., Any], description: str | None) -> str | None:
    """The explicit description, else the function's docstring."""
    return description if description is not None else inspect.getdoc(func)


@dataclass(eq=False, kw_only=True)
class Declaration:
    """A registered function and what the server needs to list and call it."""

    func: Callable[..., Any]
    name: str
    title: str | None = None
    description: str | None = None
    icons: Sequence[Mapping[str, Any]] | None = None
    meta: Mapping[str, Any] | None = None
    permission: PermissionCheck | None = None
    #: OAuth-style scopes the caller's credential must grant to use it (checked against
    #: ``Caller.has_scopes``; a caller lacking them gets 401/403, see ADR 0005).
    scopes_required: frozenset[str] = frozenset()

    #: Names the kind in error messages ("Tool", "Prompt", ...).
    label: ClassVar[str] = "Declaration"
    #: Whether ``name`` must follow :data:`TOOL_NAME` (tools and prompts; resources are
    #: identified by their URI and may have any display name).
    checks_name: ClassVar[bool] = False
    #: Suffix of the generated argument model's name, which shows in schemas and errors.
    model_suffix: ClassVar[str] = "arguments"

    def __post_init__(self) -> None:
        if self.checks_name and not TOOL_NAME.match(self.name):
            raise InvalidDeclaration(
                f"{self.label} name {self.name!r} ({self.registrant}) must be 1-128 "
                "characters of A-Z, a-z, 0-9, '_', '-' and '.'"
            )
        self.signature: Signature = self.build_signature()
        #: Known at registration, so a call does not inspect the function again.
        self.is_coroutine = inspect.iscoroutinefunction(self.func)

    def build_signature(self) -> Signature:
        """The argument model and injected parameters, from the function's type hints."""
        return build_signature(self.func, model_name=f"{self.name}_{self.model_suffix}")

    @property
    def registrant(self) -> str:
        """Where the declaration comes from (``module.qualname``), for error messages."""
        return registrant(self.func)

    @property
    def origin(self) -> str:
        """:attr:`registrant` and the file and line that declared it."""
        return describe_origin(self.func, self.registrant)

    def display_fields(self, data: dict[str, Any]) -> dict[str, Any]:
        """Add ``title``, ``description``, ``icons`` and ``_meta`` to a wire definition."""
        if self.title:
            data["title"] = self.title
        if self.description:
            data["description"] = self.description
        if self.icons:
            data["icons"] = [dict(icon) for icon in self.icons]
        if self.meta:
            data["_meta"] = dict(self.meta)
        return data


def check_options(label: str, options: Mapping[str, Any], allowed: frozenset[str]) -> None:
    """Refuse a misspelt decorator option instead of ignoring it."""
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise TypeError(
            f"{label} got unexpected option(s) {', '.join(unknown)}; "
            f"expected some of {', '.join(sorted(allowed))}"
        )
