"""An index with a ``WHERE`` clause on databases that have them, a plain index elsewhere.

Why not Django's ``Index(condition=...)``: on MySQL and MariaDB, which have no partial
indexes, Django builds the same plain index, but its system checks warn (``models.W037``)
for every model that declares one. A reusable app must not make ``manage.py check`` warn
on a supported database: the only cure would be for each project to silence W037, and with
it the warning for its own models. This index keeps the condition out of ``condition``
(which is what the check reads) and hands it to a Django conditional index built only to
write the SQL, which each database backend keeps or drops as it does for any condition.
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
        if not isinstance(where, models.Q):
            raise ValueError("PartialIndex.where must be a Q instance.")
        if kwargs.get("condition") is not None:
            raise ValueError("PartialIndex takes its condition as where=, not condition=.")
        super().__init__(*args, **kwargs)
        if not self.name:
            raise ValueError("An index must be named to use a condition.")
        self.where = where

    def create_sql(
        self,
        model: type[models.Model],
        schema_editor: BaseDatabaseSchemaEditor,
        using: str = "",
        **kwargs: Any,
    ) -> Statement:
        """Django's own SQL for this index with its condition (a throwaway
        ``Index(condition=...)``, so this one is never changed, even for a moment: two
        threads may build from it at once). Each backend keeps or drops the ``WHERE``
        clause, as it does for any conditional index."""
        _, args, plain = super().deconstruct()
        conditional = models.Index(*args, **plain, condition=self.where)
        return conditional.create_sql(model, schema_editor, using=using, **kwargs)

    def deconstruct(self) -> tuple[str, Sequence[Any], dict[str, Any]]:
        path, args, kwargs = super().deconstruct()
        kwargs["where"] = self.where
        return path, args, kwargs

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]} where={self.where!r}>"
