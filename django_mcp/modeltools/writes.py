"""Writes that stay correct when two callers act on one row at the same time.

Without care, ``update`` and ``delete`` of one row race: the update reads the row, the
delete removes it, and ``Model.save()`` -- whose UPDATE now matches nothing -- falls back
to an INSERT and the deleted row comes back; and two deletes both report success. So:

* every write reads its row with ``SELECT ... FOR UPDATE`` inside the write's transaction,
  on the router's write database (:func:`lock`), so concurrent writers take turns and the
  second one sees the first one's outcome (PostgreSQL, MySQL, Oracle; SQLite serialises
  writers by locking the whole database and ignores ``FOR UPDATE``);
* an update never inserts (:func:`updates_only`): the row is saved with
  ``force_update=True``, and a row that vanished anyway is :class:`Vanished`;
* a delete reports success only when its ``DELETE`` removed the row (:func:`delete_once`).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from django.db import DatabaseError, connections, router
from django.db.models import Model, ProtectedError, QuerySet, RestrictedError


class Vanished(Exception):
    """The row was deleted by someone else between reading and writing it."""


def write_database(model: type[Model]) -> str:
    """The alias the router sends writes of ``model`` to."""
    return router.db_for_write(model)


def lock(queryset: QuerySet[Any], using: str) -> QuerySet[Any]:
    """``queryset`` on the write database, locking the rows it returns (not the rows of
    ``select_related`` joins, where the backend can say so)."""
    queryset = queryset.using(using)
    if connections[using].features.has_select_for_update_of:
        return queryset.select_for_update(of=("self",))
    return queryset.select_for_update()


@contextlib.contextmanager
def updates_only(instance: Model) -> Iterator[None]:
    """Within the block, ``instance.save()`` (called by the serializer) only ever UPDATEs.

    The serializer's own ``update()`` runs unchanged; only the save it ends with is forced
    to be an update. Django raises a plain ``DatabaseError`` (``Model.NotUpdated``, its
    subclass, from Django 6.0) when a forced update matched no row: that is
    :class:`Vanished`; any other database error propagates.
    """
    save = instance.save
    instance.save = functools.partial(save, force_update=True)  # type: ignore[method-assign]
    try:
        yield
    except DatabaseError as exc:
        if type(exc) is DatabaseError or type(exc).__name__ == "NotUpdated":
            raise Vanished() from exc
        raise
    finally:
        del instance.save


def delete_once(instance: Model) -> bool:
    """Delete ``instance``; False when its row was already gone (nothing was deleted)."""
    _, per_model = instance.delete()
    return per_model.get(instance._meta.label, 0) > 0


def still_referenced(verbose_name: Any, exc: ProtectedError | RestrictedError) -> str:
    """Why a delete was refused: the kinds of rows that still point at this one."""
    if isinstance(exc, ProtectedError):
        objects: Any = exc.protected_objects
    else:
        objects = exc.restricted_objects
    kinds = ", ".join(sorted({str(obj._meta.verbose_name_plural) for obj in objects}))
    return f"Cannot delete this {verbose_name}: {kinds or 'other rows'} still refer to it."
