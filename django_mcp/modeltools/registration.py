"""Putting a ``ModelTools`` on a site and taking it off: its tools, all or nothing, and
each row as a resource with a change watcher when ``resource_uri`` is set."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ObjectDoesNotExist

from django_mcp.exceptions import InvalidDeclaration, MissingDependency, ToolError
from django_mcp.listen.watch import pk_of, unwatch, watch
from django_mcp.modeltools import writes
from django_mcp.modeltools.arguments import instance_signature, key_spelling
from django_mcp.modeltools.definitions import permission_check
from django_mcp.modeltools.drf_permissions import checks_objects
from django_mcp.protocol.uritemplate import expand, is_integer_text
from django_mcp.server.context import Context

if TYPE_CHECKING:
    from django.db.models import Model

    from django_mcp.modeltools.options import ModelTools
    from django_mcp.sites import MCPSite


def install(tools_class: type[ModelTools], site: MCPSite, model: type[Model]) -> ModelTools | None:
    """Register ``model``'s tools (and instance resource) on ``site``, all or nothing: a
    failure leaves the site as it was, so the corrected class can be registered. A missing
    optional package is recorded for check ``django_mcp.E010`` instead."""
    try:
        tools = tools_class(model, site)
    except MissingDependency as exc:
        site.unavailable[model] = str(exc)
        return None
    snapshot = site.snapshot()
    try:
        for spec in tools.get_tools():
            site.add_tool(spec)
        site.add_model(model, tools)
        tools.register_resources()
    except BaseException:
        site.restore(snapshot)
        raise
    return tools


def register_resources(tools: ModelTools) -> None:
    """Serve each row at ``resource_uri`` and announce its saves and deletes."""
    if tools.resource_uri is None:
        return
    key, template = tools.lookup_argument, tools.resource_uri
    if "{" + key + "}" not in template:
        raise InvalidDeclaration(
            f"{type(tools).__qualname__}.resource_uri must contain {{{key}}}, the lookup argument"
        )
    action = row_action(tools)
    is_spelled = key_spelling(tools.model, key)

    def row_of(variables: Mapping[str, str], ctx: Context) -> Model:
        """The row the URI names. An integer or UUID key has one spelling, ``str()``'s:
        the field's ``to_python`` would also read ``1_000``, `` 7``, ``+7`` or ``\u0667``
        as a number, and an uppercase UUID, and many URIs would name one row."""
        value = variables.get(key)
        if is_spelled is None or value is None:
            return tools.get_object(variables, ctx)
        if not is_spelled(value):
            raise ToolError(f"{key}: not the value's spelling")
        if is_spelled is is_integer_text:  # the lookup argument's schema says integer
            try:
                number = int(value)
            except ValueError as exc:  # more digits than int() reads: no column holds it
                raise ToolError(f"{key}: not a key") from exc
            return tools.get_object({**variables, key: number}, ctx)
        return tools.get_object(variables, ctx)

    def read_instance(ctx: Context, **variables: str) -> Any:
        try:  # a missing or malformed key is "resource not found", not a tool error
            instance = row_of(variables, ctx)
        except ToolError as exc:
            raise ObjectDoesNotExist(str(exc)) from exc
        context = tools._serializer_context(ctx)  # as the get tool gives it
        return tools.get_serializer_class()(instance, context=context).data

    def row_visible(ctx: Context | None, **variables: str) -> bool:
        """Whether ``get_queryset`` shows the caller this row: a listen stream is told of
        a row's change only then, or it would learn of rows ``resources/read`` hides."""
        if ctx is None:
            return False
        try:
            row_of(variables, ctx)
        except (ToolError, ObjectDoesNotExist):
            return False
        return True

    def row_visible_by_pk(ctx: Context | None, row: Mapping[str, Any]) -> bool | None:
        """Whether the caller may see the row that changed, named by its primary key
        (:func:`django_mcp.listen.watch.row_of`): found by ``pk`` within ``get_queryset``
        and allowed by ``has_object_permission``, as ``get_object`` allows it. Asking by
        the URI's key instead would let a caller who sees *a* row with that key (its own)
        hear of another caller's row with the same key, when ``lookup_field`` is not
        unique. A row of another model (a project's ``watch`` of a related model that
        announces this row's URI) is not one of these rows: None, so that ``visible``
        decides by the URI's key, as it did before changes named their rows."""
        if row.get("model") != tools.opts.label:
            return None
        if ctx is None:
            return False
        instance = writes.one_row(tools.get_queryset(ctx).filter(pk=pk_of(row)))
        return instance is not None and tools.has_object_permission(ctx, "get", instance)

    read_instance.__qualname__ = f"{type(tools).__qualname__}.read_instance"
    read_instance.__signature__ = instance_signature(key)  # type: ignore[attr-defined]
    read_instance.__annotations__ = {"ctx": Context, key: str, "return": Any}
    gated = functools.partial(permission_check, tools, action) if tools.is_gated() else None
    tools.site.resource(
        template,
        name=tools.prefix,
        description=f"One {tools.opts.verbose_name}, as JSON.",
        mime_type="application/json",
        permission=gated,
        # The rows answer to the reading action's scopes, as its tool does: a token
        # without them must not read through resources/read what the tool refuses.
        scopes_required=sorted(tools.scopes_for(action)),
        visible=row_visible if scopes_rows(tools) else None,
        row_visible=row_visible_by_pk if scopes_rows(tools) else None,
    )(read_instance)
    field = tools.opts.pk.name if tools.lookup_field == "pk" else tools.lookup_field
    # A row's URI is the template's expansion, percent-encoded as a client expands it:
    # "AC/DC 100%" is announced as AC%2FDC%20100%25, the URI read and subscribed to.
    tools._watcher = watch(
        tools.model,
        uri=lambda obj: expand(template, {key: str(getattr(obj, field))}),
        site=tools.site,
    )


def scopes_rows(tools: ModelTools) -> bool:
    """Whether the class scopes rows by caller: it overrides ``get_queryset`` or
    ``has_object_permission``, or a permission class of its has an object-level rule
    (:func:`.drf_permissions.checks_objects`). Only then are a row's changes checked
    against what the listener may read: a row deleted is gone from every queryset, so its
    deletion reaches no stream of such a class (telling one would tell them its key),
    while every row of an unscoped class is everyone's, its deletion included. Its rows
    are never cached as ``public`` either."""
    from django_mcp.modeltools.options import ModelTools

    kind = type(tools)
    return (
        kind.get_queryset is not ModelTools.get_queryset
        or kind.has_object_permission is not ModelTools.has_object_permission
        or any(map(checks_objects, tools.permission_classes))
    )


def row_action(tools: ModelTools) -> str:
    """The action whose permissions and scopes guard the rows as resources: ``get``, which
    reads one row, or ``list``, which shows every row, when there is no ``get``. A class
    with neither reads no rows, so it cannot serve them."""
    for action in ("get", "list"):
        if action in tools.actions:
            return action
    raise InvalidDeclaration(
        f"{type(tools).__qualname__}.resource_uri serves rows, which needs a get or list "
        f"action; actions are {list(tools.actions)}"
    )


def unregister_resources(tools: ModelTools) -> None:
    """Undo :func:`register_resources`."""
    if tools.resource_uri is None:
        return
    if tools.site.is_registered(tools.resource_uri):
        tools.site.unregister(tools.resource_uri)
    if tools._watcher is not None:
        unwatch(tools.model, tools._watcher)
