"""What else a ``delete`` removes, and whether the caller may remove that too.

Deleting a row deletes the rows whose foreign keys ``CASCADE`` to it. The admin asks
before it deletes (``get_deleted_objects``): every row the delete would take whose model
the admin site serves must be one its ``ModelAdmin`` lets the user delete, or nothing is
deleted. Without the same question, a caller allowed to delete authors deleted their
books through the cascade, holding no permission to delete a book. So a ``delete`` asks
it of the site the ``ModelTools`` is on: each model among the rows the delete would take
that the site serves through a permission-gated ``ModelTools`` must allow the caller its
``delete`` action (:meth:`~django_mcp.modeltools.ModelTools.has_permission`), and, where
its ``ModelTools`` decides row by row, each of those rows
(:meth:`~django_mcp.modeltools.ModelTools.has_object_permission`), as the admin asks
``has_delete_permission(request, obj)`` of each; and a token must grant that model's
``delete`` scopes (``scopes_required``), as its ``delete`` tool would ask. A model the
site does not serve is not asked about, as in the admin. The rows are found by Django's
own ``Collector``, as ``Model.delete()`` finds them, and only when the site has another
gated model: otherwise a delete costs what it did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models.deletion import Collector

from django_mcp.exceptions import ToolError
from django_mcp.modeltools.drf_permissions import checks_objects
from django_mcp.modeltools.writes import write_database

if TYPE_CHECKING:
    from django.db.models import Model

    from django_mcp.modeltools.options import ModelTools
    from django_mcp.server.context import Context


def forbidden(tools: ModelTools, ctx: Context, instance: Model) -> list[str]:
    """The verbose names (plural) of the site's gated models whose rows deleting
    ``instance`` would also delete and which the caller may not delete; empty when the
    delete may go ahead. As the admin asks ``has_delete_permission(request, obj)`` of each
    row, a model whose ``ModelTools`` checks rows (``has_object_permission``: an owner
    rule) is asked about each row the delete takes, this model's own others included (a
    reply deleted with the comment it answers). May raise ``ProtectedError`` or
    ``RestrictedError``, as the delete itself would."""
    asked = {
        model: other
        for model, other in tools.site.registered_models().items()
        if (model is not tools.model and guards_delete(other)) or checks_rows(other)
    }
    if not asked:
        return []
    collector = Collector(using=write_database(tools.model), origin=instance)
    collector.collect([instance])
    taken: dict[type[Model], list[Any]] = {}
    for model, rows in collector.data.items():
        if model in asked:
            taken.setdefault(model, []).append(list(rows))
    for unread in collector.fast_deletes:
        fast_model: Any = getattr(unread, "model", None)
        if fast_model in asked:
            taken.setdefault(fast_model, []).append(unread)
    refused = []
    for model, batches in taken.items():
        other = asked[model]
        every_row = checks_rows(other)  # else one row tells that the model is taken
        others = [
            row
            for batch in batches
            for row in (batch if isinstance(batch, list) else _read(batch, every_row))
            if not (model is tools.model and row.pk == instance.pk)
        ]
        if not others:
            continue
        may = model is tools.model or may_delete(other, ctx)
        if may and every_row:
            may = all(other.has_object_permission(ctx, "delete", row) for row in others)
        if not may:
            refused.append(str(model._meta.verbose_name_plural))
    return sorted(refused)


def guards_delete(other: ModelTools) -> bool:
    """Whether ``other``'s ``delete`` asks anything of the caller: a permission, or the
    scopes a token must grant (``scopes_required``, which its ``delete`` tool asks)."""
    return other.is_gated() or bool(other.scopes_for("delete"))


def may_delete(other: ModelTools, ctx: Context) -> bool:
    """Whether the caller may use ``other``'s ``delete``: its token's scopes, then its
    permissions."""
    if not ctx.caller.has_scopes(other.scopes_for("delete")):
        return False
    return not other.is_gated() or other.has_permission(ctx, "delete")


def _read(rows: Any, every_row: bool) -> Any:
    """The rows of a queryset the collector deletes without reading them: all of them to
    ask each, else at most one."""
    return rows.iterator() if every_row else rows[:1]


def checks_rows(other: ModelTools) -> bool:
    """Whether ``other`` decides row by row: a ``has_object_permission`` of its own, or a
    permission class with an object-level check."""
    from django_mcp.modeltools.options import ModelTools

    if type(other).has_object_permission is not ModelTools.has_object_permission:
        return True
    return any(checks_objects(permission) for permission in other.permission_classes)


def refuse(tools: ModelTools, ctx: Context, instance: Model) -> None:
    """Raise a tool error when the delete of ``instance`` would take rows the caller may
    not delete (:func:`forbidden`)."""
    kinds = forbidden(tools, ctx, instance)
    if kinds:
        raise ToolError(
            f"Cannot delete this {tools.opts.verbose_name}: it would also delete "
            f"{', '.join(kinds)}, which you may not delete."
        )
