"""Resource declarations (server/resources.mdx): fixed URIs and RFC 6570 URI templates.

A resource function returns its contents: ``str`` (text), ``bytes`` (blob),
:class:`~django_mcp.declarations.content.ResourceContents` (or a list of them, e.g. a
directory), or any other value, which is served as JSON; ``None`` means not found.
Template variables are passed as arguments, validated by their type hints; a
:class:`~django_mcp.server.context.Context` parameter is injected.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Final, Union, get_args, get_origin
from uuid import UUID

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from django_mcp.declarations import invoke
from django_mcp.declarations.base import Declaration, check_options, describe
from django_mcp.declarations.completion import check_choices
from django_mcp.declarations.content import Annotations, ResourceContents, annotations_problem
from django_mcp.declarations.options import CacheScope, ResourceOptions, option_names
from django_mcp.declarations.permissions import combine, normalise_scopes
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol.errors import ResourceNotFound
from django_mcp.protocol.uritemplate import (
    InvalidTemplate,
    URITemplate,
    is_integer_text,
    is_template,
    is_uuid_text,
    normalised,
)

RESOURCE_OPTIONS: Final = option_names(ResourceOptions)
Completer = Callable[..., Any]


@dataclass(eq=False, kw_only=True)
class ResourceDeclaration(Declaration):
    """What fixed resources and resource templates share: a URI (or template) and what
    their contents are, cache hints and completers."""

    uri: str
    mime_type: str | None = None
    annotations: Annotations | None = None
    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None
    completers: dict[str, Completer] = field(default_factory=dict)

    label: ClassVar[str] = "Resource"
    model_suffix: ClassVar[str] = "variables"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.cache_scope not in (None, "public", "private"):
            raise InvalidDeclaration(
                f'{self.registrant}: cache_scope must be "public" or "private", '
                f"not {self.cache_scope!r}"
            )
        if self.ttl_ms is not None and (
            not isinstance(self.ttl_ms, int) or isinstance(self.ttl_ms, bool) or self.ttl_ms < 0
        ):
            raise InvalidDeclaration(
                f"{self.registrant}: ttl_ms must be a whole number of milliseconds >= 0, "
                f"not {self.ttl_ms!r}"
            )
        if self.annotations is not None:
            problem = annotations_problem(self.annotations)
            if problem is not None:
                raise InvalidDeclaration(f"{self.registrant}: {problem}")
        if normalised(self.uri) != self.uri:  # looked up in that form, so never found
            raise InvalidDeclaration(
                f"{self.registrant}: declare {self.uri!r} in its RFC 3986 normal form, "
                f"{normalised(self.uri)!r} (the form requested URIs are matched in)"
            )

    def _describe(self, data: dict[str, Any]) -> dict[str, Any]:
        self.display_fields(data)
        if self.mime_type:
            data["mimeType"] = self.mime_type
        if self.annotations is not None:
            data["annotations"] = self.annotations.to_dict()
        return data

    @cached_property
    def spelled_variables(self) -> tuple[tuple[str, Callable[[str], bool]], ...]:
        """The parameters typed ``int`` or ``UUID`` (or either ``| None``), each with the
        test of its one spelling (``str()``'s), which pydantic's lax conversion would not
        insist on."""
        fields = self.signature.model.model_fields
        spelled = ((name, _spelling_of(info.annotation)) for name, info in fields.items())
        return tuple((name, check) for name, check in spelled if check is not None)

    def read(self, uri: str, variables: Mapping[str, str], context: Any) -> list[dict[str, Any]]:
        """Call the function for ``uri`` and convert what it returns to contents items."""
        model: type[BaseModel] = self.signature.model
        for name, is_spelled in self.spelled_variables:
            if name in variables and not is_spelled(variables[name]):
                raise ResourceNotFound(uri)  # ``1_000``, ``+7``: another spelling of a value
        values = model.model_validate(dict(variables))  # lax: URI variables are strings
        kwargs = {name: getattr(values, name) for name in model.model_fields}
        for name in self.signature.context_params:
            kwargs[name] = context
        value = invoke.call(self.func, _context=context, _coroutine=self.is_coroutine, **kwargs)
        if value is None:  # e.g. ``.filter(...).first()`` found nothing
            raise ResourceNotFound(uri)
        return to_contents(value, uri, self.mime_type)


@dataclass(eq=False, kw_only=True)
class ResourceSpec(ResourceDeclaration):
    """A resource with a fixed URI, listed by ``resources/list``."""

    size: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.size is not None and (
            not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 0
        ):
            raise InvalidDeclaration(
                f"{self.registrant}: size must be a whole number of bytes >= 0, not {self.size!r}"
            )
        if self.signature.model.model_fields:
            raise InvalidDeclaration(
                f"{self.registrant}: resource {self.uri!r} has no URI variables, so its function "
                "cannot take arguments (only a Context)"
            )

    @cached_property
    def definition(self) -> dict[str, Any]:
        data: dict[str, Any] = {"uri": self.uri, "name": self.name}
        self._describe(data)
        if self.size is not None:
            data["size"] = self.size
        return data


@dataclass(eq=False, kw_only=True)
class ResourceTemplateSpec(ResourceDeclaration):
    """A family of resources named by an RFC 6570 template, listed by
    ``resources/templates/list``."""

    #: Whether the caller may learn of one resource of the family (the ``visible`` option):
    #: asked before its change reaches a listen stream. None: every resource the template
    #: names is as visible as the template.
    visible: Callable[..., bool] | None = None
    #: Whether the caller may see one row of a model, asked instead of ``visible`` when
    #: the change names its row (``row_visible(ctx, {"model": label, "pk": pk})``, the
    #: event :func:`django_mcp.listen.watch.watch` publishes): a ``ModelTools`` template
    #: sets it, so a listener hears of the row that changed only if it may see that row,
    #: whether or not the lookup field is unique (the ``row_visible`` option). None
    #: from it: not a row it judges (another model's); ``visible`` decides.
    row_visible: Callable[[Any, Mapping[str, Any]], bool | None] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        try:
            self.template = URITemplate(self.uri)
        except InvalidTemplate as exc:
            raise InvalidDeclaration(f"{self.registrant}: {exc}") from exc
        fields = self.signature.model.model_fields
        not_in_template = [
            name
            for name, info in fields.items()
            if name not in self.template.variables and info.is_required()
        ]
        not_accepted = [name for name in self.template.variables if name not in fields]
        if not_in_template or not_accepted:
            problems = []
            if not_accepted:
                problems.append(f"the function has no parameter for {_listed(not_accepted)}")
            if not_in_template:
                problems.append(f"the template has no variable for {_listed(not_in_template)}")
            raise InvalidDeclaration(
                f"{self.registrant}: the parameters of a template resource must be its URI "
                f"variables {list(self.template.variables)}: " + "; ".join(problems) + "."
            )
        for name in self.template.variables:
            if name not in self.completers:
                check_choices(self.registrant, name, fields[name].annotation)
        for name in self.completers:
            if name not in self.template.variables:
                raise InvalidDeclaration(
                    f"{self.registrant}: cannot complete {name!r}, which is not a variable of "
                    f"{self.uri!r}"
                )

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's variables if ``uri`` is one of its resources, else None."""
        return self.template.match(uri)

    @cached_property
    def definition(self) -> dict[str, Any]:
        return self._describe({"uriTemplate": self.uri, "name": self.name})


def to_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """Convert a resource function's return value to ``contents`` items."""
    if isinstance(value, ResourceContents):
        return [value.to_dict()]
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(item, ResourceContents) for item in value)
    ):
        return [item.to_dict() for item in value]
    if isinstance(value, str):
        return [ResourceContents(uri, text=value, mime_type=mime_type or "text/plain").to_dict()]
    if isinstance(value, bytes | bytearray | memoryview):
        return [
            ResourceContents(
                uri, blob=bytes(value), mime_type=mime_type or "application/octet-stream"
            ).to_dict()
        ]
    text = json.dumps(to_jsonable_python(value), ensure_ascii=False)
    return [ResourceContents(uri, text=text, mime_type=mime_type or "application/json").to_dict()]


def resource_from_options(
    uri: str, func: Callable[..., Any], options: ResourceOptions
) -> ResourceSpec | ResourceTemplateSpec:
    """Build the spec for ``@resource(uri, **options)`` on ``func``: a template when
    ``uri`` is an RFC 6570 template such as ``books://{isbn}``, else a fixed resource."""
    check_options("resource()", options, RESOURCE_OPTIONS)
    common: dict[str, Any] = {
        "func": func,
        "uri": uri,
        "name": options.get("name") or func.__name__,
        "title": options.get("title"),
        "description": describe(func, options.get("description")),
        "mime_type": options.get("mime_type"),
        "annotations": options.get("annotations"),
        "icons": options.get("icons"),
        "meta": options.get("meta"),
        "ttl_ms": options.get("ttl_ms"),
        "cache_scope": options.get("cache_scope"),
        "completers": dict(options.get("complete") or {}),
        "permission": combine(options.get("permission_required"), options.get("permission")),
        "scopes_required": normalise_scopes(options.get("scopes_required")),
    }
    if is_template(uri):
        if options.get("size") is not None:
            raise TypeError("size applies to fixed resources, not templates")
        return ResourceTemplateSpec(
            visible=options.get("visible"), row_visible=options.get("row_visible"), **common
        )
    for name in ("visible", "row_visible"):
        if options.get(name) is not None:
            raise TypeError(f"{name} applies to resource templates, not fixed resources")
    return ResourceSpec(size=options.get("size"), **common)


#: The spelling tests of the types whose values ``str()`` spells one way only.
_SPELLINGS: Final[dict[Any, Callable[[str], bool]]] = {int: is_integer_text, UUID: is_uuid_text}


def _spelling_of(annotation: Any) -> Callable[[str], bool] | None:
    """The spelling test of ``annotation`` (``int``, ``UUID``, or either in a union with
    ``None``), else None."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [m for m in get_args(annotation) if m is not type(None)]
        if len(members) != 1:
            return None
        annotation = members[0]
    return _SPELLINGS.get(annotation) if isinstance(annotation, type) else None


def _listed(names: list[str]) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b' and 'c'``."""
    quoted = [repr(name) for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
