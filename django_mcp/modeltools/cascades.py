"""What else a ``delete`` removes, and whether the caller may remove that too.

Deleting a row deletes the rows whose foreign keys ``CASCADE`` to it. The admin asks
before it deletes (``get_deleted_objects``): every row the delete would take whose model
the admin site serves must be one its ``ModelAdmin`` lets the user delete, or nothing is
deleted. Without the same question, a caller allowed to delete authors deleted their
books through the cascade, holding no permission to delete a book. So a ``delete`` asks
it of the site the ``ModelTools`` is on: each model among the rows the delete would take
that the site serves through a permission-gated ``ModelTools`` must allow the caller its
``delete`` action (:meth:`~django_mcp.modeltools.ModelTools.has_permission`). A model the
site does not serve is not asked about, as in the admin. The rows are found by Django's
own ``Collector``, as ``Model.delete()`` finds them, and only when the site has another
gated model: otherwise a delete costs what it did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models.deletion import Collector

from django_mcp.exceptions import ToolError
from django_mcp.modeltools.writes import write_database

if TYPE_CHECKING:
    from django.db.models import Model

    from django_mcp.modeltools.options import ModelTools
    from django_mcp.server.context import Context


def forbidden(tools: ModelTools, ctx: Context, instance: Model) -> list[str]:
    """The verbose names (plural) of the site's gated models whose rows deleting
    ``instance`` would also delete and whose ``delete`` the caller may not use; empty when
    the delete may go ahead. May raise ``ProtectedError`` or ``RestrictedError``, as the
    delete itself would."""
    gated = {
        model: other
        for model, other in tools.site.registered_models().items()
        if model is not tools.model and other.is_gated()
    }
    if not gated:
        return []
    collector = Collector(using=write_database(tools.model), origin=instance)
    collector.collect([instance])
    taken = {model for model, rows in collector.data.items() if rows}
    taken |= {model for model in map(_model_of, collector.fast_deletes) if model is not None}
    return sorted(
        str(model._meta.verbose_name_plural)
        for model in taken
        if model in gated and not gated[model].has_permission(ctx, "delete")
    )


def _model_of(rows: Any) -> type[Model] | None:
    """The model of rows the collector deletes without reading them (a queryset), when
    there is at least one such row."""
    model = getattr(rows, "model", None)
    if model is None or not rows.exists():
        return None
    return model  # type: ignore[no-any-return]


def refuse(tools: ModelTools, ctx: Context, instance: Model) -> None:
    """Raise a tool error when the delete of ``instance`` would take rows the caller may
    not delete (:func:`forbidden`)."""
    kinds = forbidden(tools, ctx, instance)
    if kinds:
        raise ToolError(
            f"Cannot delete this {tools.opts.verbose_name}: it would also delete "
            f"{', '.join(kinds)}, which you may not delete."
        )
