"""Index changes that keep a big request log writable while they run.

Why: a plain ``CREATE INDEX`` on PostgreSQL blocks every write to the table until the
index is built (minutes at millions of rows, while the recorder's writes pile up), and a
plain ``DROP INDEX`` waits for every running query on the table and blocks all others
meanwhile. ``CONCURRENTLY`` avoids both, but cannot run inside a transaction, so the
migrations that use these operations say ``atomic = False``. Django's own
``AddIndexConcurrently`` is PostgreSQL-only (it fails elsewhere) and has no counterpart for
an ``AlterField`` that drops ``db_index``; these fall back to the plain operation on other
databases, where the request log is a development affair. The module's name starts with an
underscore, so Django's migration loader does not take it for a migration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import NotSupportedError
from django.db.migrations.operations import AddIndex, AlterField
from django.db.models import Index

if TYPE_CHECKING:
    from django.db.backends.base.schema import BaseDatabaseSchemaEditor
    from django.db.migrations.operations.base import Operation
    from django.db.migrations.state import ProjectState


def _concurrently(operation: Operation, schema_editor: BaseDatabaseSchemaEditor) -> bool:
    """Whether to use ``CONCURRENTLY``: on PostgreSQL, and then never in a transaction."""
    if schema_editor.connection.vendor != "postgresql":
        return False
    if schema_editor.connection.in_atomic_block:
        raise NotSupportedError(
            f"{type(operation).__name__} cannot run inside a transaction "
            "(set atomic = False on the migration)."
        )
    return True


class AddIndexConcurrently(AddIndex):
    """``AddIndex`` built with ``CREATE INDEX CONCURRENTLY`` on PostgreSQL."""

    def database_forwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if not _concurrently(self, schema_editor):
            super().database_forwards(app_label, schema_editor, from_state, to_state)
            return
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index, concurrently=True)  # type: ignore[call-arg]

    def database_backwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if not _concurrently(self, schema_editor):
            super().database_backwards(app_label, schema_editor, from_state, to_state)
            return
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.remove_index(model, self.index, concurrently=True)  # type: ignore[call-arg]


class DropFieldIndexConcurrently(AlterField):
    """An ``AlterField`` whose only change is ``db_index=True`` to ``False``: on PostgreSQL
    the field's own index goes with ``DROP INDEX CONCURRENTLY`` (and comes back with
    ``CREATE INDEX CONCURRENTLY`` when the migration is reversed)."""

    def database_forwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if not _concurrently(self, schema_editor):
            super().database_forwards(app_label, schema_editor, from_state, to_state)
            return
        model = from_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        column = model._meta.get_field(self.name).column
        # As AlterField finds it: the btree index on this column alone that Meta did not
        # declare (Django names db_index indexes by a hash, not by a rule to rebuild).
        declared = {index.name for index in model._meta.indexes}
        names = schema_editor._constraint_names(  # type: ignore[attr-defined]
            model, [column], index=True, type_=Index.suffix, exclude=declared
        )
        for name in names:
            schema_editor.execute(
                schema_editor._delete_index_sql(model, name, concurrently=True)  # type: ignore[call-arg]
            )

    def database_backwards(
        self,
        app_label: str,
        schema_editor: BaseDatabaseSchemaEditor,
        from_state: ProjectState,
        to_state: ProjectState,
    ) -> None:
        if not _concurrently(self, schema_editor):
            super().database_backwards(app_label, schema_editor, from_state, to_state)
            return
        model = to_state.apps.get_model(app_label, self.model_name)  # db_index=True again
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            field = model._meta.get_field(self.name)
            schema_editor.execute(
                schema_editor._create_index_sql(model, fields=[field], concurrently=True)  # type: ignore[arg-type, call-arg]
            )
