"""An index with a ``WHERE`` clause on databases that have them, a plain index elsewhere.

Why not Django's ``Index(condition=...)``: on MySQL and MariaDB, which have no partial
indexes, Django builds the same plain index, but its system checks warn (``models.W037``)
for every model that declares one. A reusable app must not make ``manage.py check`` warn
on a supported database: the only cure would be for each project to silence W037, and with
it the warning for its own models. This index keeps the condition out of ``condition``
(which is what the check reads) and puts it there only while the SQL is built, where each
database backend keeps it or drops it as it does for any condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.db import models

if TYPE_CHECKING:
    from django.db.backends.base.schema import BaseDatabaseSchemaEditor
    from django.db.backends.ddl_references import Statement


class PartialIndex(models.Index):
    """``PartialIndex(fields=..., name=..., where=Q(...))``: ``where`` is the condition."""

    def __init__(self, *args: Any, where: models.Q, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.where = where

    def create_sql(
        self,
        model: type[models.Model],
        schema_editor: BaseDatabaseSchemaEditor,
        using: str = "",
        **kwargs: Any,
    ) -> Statement:
        """Django's own SQL for the index with its condition: each backend keeps or drops
        the ``WHERE`` clause, as it does for any ``Index(condition=...)``."""
        self.condition = self.where
        try:
            return super().create_sql(model, schema_editor, using=using, **kwargs)
        finally:
            self.condition = None

    def deconstruct(self) -> tuple[str, Sequence[Any], dict[str, Any]]:
        path, args, kwargs = super().deconstruct()
        kwargs["where"] = self.where
        return path, args, kwargs
