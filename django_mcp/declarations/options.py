"""The keyword options of ``@tool``, ``@resource`` and ``@prompt``, declared once.

The site's decorators and the front-door ``django_mcp.tool`` / ``resource`` / ``prompt``
take ``**options: Unpack[ToolOptions]`` (PEP 692), so editors and mypy see every option
with its type, and a new option is added in exactly one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypedDict

from django_mcp.declarations.content import Annotations
from django_mcp.declarations.permissions import PermissionCheck

CacheScope = Literal["public", "private"]
TaskMode = Literal["optional", "required"]


class CommonOptions(TypedDict, total=False):
    """Options every declaration takes."""

    #: The wire name (tools, prompts) or display name (resources); default: the function's.
    name: str | None
    title: str | None
    #: Default: the function's docstring.
    description: str | None
    icons: list[dict[str, Any]] | None
    meta: dict[str, Any] | None
    #: Django permission(s) the caller must hold, like ``permission_required``.
    permission_required: str | Sequence[str] | None
    #: A custom check ``(Context) -> bool``; both must pass when both are given.
    permission: PermissionCheck | None
    #: Scope(s) the credential must grant (a token's scopes); a session is not limited.
    scopes_required: str | Sequence[str] | None


class ToolOptions(CommonOptions, total=False):
    """Options of ``@tool`` (server/tools.mdx, "Tool annotations" for the hints)."""

    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    open_world: bool | None
    #: Force (True) or suppress (False) ``outputSchema``/``structuredContent``.
    structured_output: bool | None
    #: Run as an MCP task (docs/guides/tasks.md): ``"optional"`` (a task for clients that
    #: declare the Tasks extension, when the task policy agrees) or ``"required"``
    #: (only as a task; other clients get -32021). Default None: never a task.
    task: TaskMode | None
    #: Input gathered in synchronous rounds before the task is created: key -> request
    #: (``Elicit``, ``Sample``, ``ListRoots``); the task's ``ctx`` sees the answers.
    task_inputs: dict[str, Any] | None
    #: A hand-written JSON Schema 2020-12 for the arguments, published unchanged and
    #: enforced on every call (needs ``jsonschema``).
    input_schema: dict[str, Any] | None


class ResourceOptions(CommonOptions, total=False):
    """Options of ``@resource`` (server/resources.mdx)."""

    mime_type: str | None
    annotations: Annotations | None
    #: Fixed resources only: the size in bytes, if known.
    size: int | None
    #: Cache hints (server/utilities/caching.mdx).
    ttl_ms: int | None
    cache_scope: CacheScope | None
    #: Argument name -> completer, for ``completion/complete``.
    complete: dict[str, Callable[..., Any]] | None
    #: Templates only: ``visible(ctx, **variables) -> bool``, whether the caller may learn
    #: that the resource a URI names exists. A ``notifications/resources/updated`` reaches
    #: a listen stream only when it says yes (``ctx`` is None for a stream with no caller).
    visible: Callable[..., bool] | None
    #: Templates only: ``row_visible(ctx, row) -> bool | None``, asked instead of
    #: ``visible`` when a change names the row it is about (``row`` is ``{"model": label,
    #: "pk": pk}``, what :func:`django_mcp.listen.watch.watch` publishes): whether the
    #: caller may see *that* row, which a key in the URI may not name alone (``ModelTools``
    #: sets it); None for a row it cannot judge (another model's), which ``visible`` decides.
    row_visible: Callable[..., bool | None] | None


class PromptOptions(CommonOptions, total=False):
    """Options of ``@prompt`` (server/prompts.mdx)."""

    complete: dict[str, Callable[..., Any]] | None


def option_names(options: Any) -> frozenset[str]:
    """Every key a TypedDict of options accepts (inherited ones included)."""
    return frozenset(options.__optional_keys__ | options.__required_keys__)
