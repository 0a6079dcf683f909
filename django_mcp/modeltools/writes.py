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
* a delete reports success only when its ``DELETE`` removed the row (:func:`delete_once`);
* a refusal raised while saving is the tool error it is (:func:`refused_as_tool_error`);
* a write the database itself refuses is a tool error too (:func:`atomic`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Iterator
from typing import Any

from django.db import (
    DatabaseError,
    DataError,
    IntegrityError,
    OperationalError,
    connections,
    router,
    transaction,
)
from django.db.models import Model, ProtectedError, QuerySet, RestrictedError
from django.http import Http404

from django_mcp.db_refusals import mysql_refused_value
from django_mcp.exceptions import ToolError
from django_mcp.modeltools import arguments as args

logger = logging.getLogger("django_mcp")


class Vanished(Exception):
    """The row was deleted by someone else between reading and writing it."""


def write_database(model: type[Model]) -> str:
    """The alias the router sends writes of ``model`` to."""
    return router.db_for_write(model)


@contextlib.contextmanager
def atomic(model: type[Model], *, deleting: bool = False) -> Iterator[None]:
    """``transaction.atomic()`` on ``model``'s write database, in which a write the
    database refuses -- at its statement or at the commit (a deferred foreign key) -- is
    a tool error, undone with the transaction: ``IntegrityError`` (a ``CheckConstraint``,
    which DRF never validates; a unique value another caller saved since the serializer
    checked it) or ``DataError`` (a value past its column, which a serializer field of
    the project's own may let through). Left alone they were -32603 "Internal error". The
    database's message is not repeated to the client (it names columns, constraints and
    other rows' values) but logged as a warning, quoted: a hook that leaves a required
    column empty is a bug its developer must still see."""
    try:
        with transaction.atomic(using=write_database(model)):
            yield
    except (IntegrityError, DataError, OperationalError) as exc:
        if isinstance(exc, OperationalError) and not mysql_refused_value(exc):
            raise  # the database is gone, or busy: not the input's fault
        logger.warning("The database refused a write of %s: %r", model._meta.label, str(exc))
        raise ToolError(database_refusal(model._meta.verbose_name, exc, deleting)) from exc


def database_refusal(verbose_name: Any, exc: DatabaseError, deleting: bool) -> str:
    """What a write the database refused tells the model."""
    if deleting:
        return f"Cannot delete this {verbose_name}: the database refused it."
    if isinstance(exc, (DataError, OperationalError)):
        return f"Invalid {verbose_name}: a value does not fit its column in the database."
    return (
        f"Invalid {verbose_name}: the database refused it, as it breaks a constraint "
        "(a value that must be unique and another row has, or a check it fails)."
    )


class SeveralRows(Exception):
    """The lookup names more than one row (its field is not unique)."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


def lock(queryset: QuerySet[Any], using: str) -> QuerySet[Any]:
    """``queryset`` on the write database, locking the rows it returns (not the rows of
    ``select_related`` joins, where the backend can say so)."""
    queryset = queryset.using(using)
    if connections[using].features.has_select_for_update_of:
        return queryset.select_for_update(of=("self",))
    return queryset.select_for_update()


def lockable(queryset: QuerySet[Any]) -> bool:
    """Whether ``SELECT ... FOR UPDATE`` may be added to ``queryset`` itself: PostgreSQL
    refuses it with ``DISTINCT``, ``GROUP BY`` (an aggregate annotation), a window
    function or a set operation, which a ``get_queryset`` scoping rows through a
    many-valued relation uses."""
    query = queryset.query
    return not (
        query.distinct
        or query.group_by is not None
        or query.combinator
        or any(getattr(a, "contains_over_clause", False) for a in query.annotations.values())
    )


def one_row(queryset: QuerySet[Any]) -> Model | None:
    """The one row ``queryset`` (filtered by a lookup) names, or None. A row repeated by
    a join of ``get_queryset`` (a filter through a many-valued relation, without
    ``distinct()``) is still one row; :class:`SeveralRows` when it names several, even
    when one row's repeats fill every row read (then the keys are counted apart: the
    other row would otherwise never be seen, and the call would act on a guess)."""
    found: dict[Any, Model] = {}
    rows = list(queryset[: _MAX_ROWS + 1])
    for row in rows:
        found.setdefault(row.pk, row)
    if len(found) == 1 and len(rows) > _MAX_ROWS:
        # One row's repeats filled what was read: another row with the key may follow.
        pks = _distinct_pks(queryset)
        if len(pks) > 1:
            raise SeveralRows(len(pks))
    if len(found) > 1:
        raise SeveralRows(len(found))
    return next(iter(found.values()), None)


def _distinct_pks(queryset: QuerySet[Any]) -> list[Any]:
    """The primary keys of the rows ``queryset`` names, each once (at most
    ``_MAX_ROWS + 1``); asked only when one row's repeats filled a read, so a lookup
    costs no more query otherwise. Without the lock a write's read takes, which
    PostgreSQL refuses with ``DISTINCT``: the row read is locked already."""
    query = queryset.order_by()
    query.query.select_for_update = False
    return list(query.values_list("pk", flat=True).distinct()[: _MAX_ROWS + 1])


def locked_row(queryset: QuerySet[Any], using: str) -> Model | None:
    """:func:`one_row` read on the write database and locked until the transaction ends.

    A queryset that cannot be locked as it is (:func:`lockable`) has its row locked by
    primary key on the model's base manager, then read again through it, so the row keeps
    what ``get_queryset`` adds (annotations, ``select_related``) and a row that left the
    caller's scope meanwhile is not found."""
    queryset = queryset.using(using)
    if lockable(queryset):
        return one_row(lock(queryset, using))
    pks = {pk for pk in queryset.order_by().values_list("pk", flat=True)[: _MAX_ROWS + 1]}
    if len(pks) > 1:
        raise SeveralRows(len(pks))
    if not pks:
        return None
    model = queryset.model
    locked = lock(model._base_manager.filter(pk__in=pks), using).values_list("pk", flat=True)
    if not list(locked):
        return None
    return one_row(queryset.filter(pk__in=pks))


#: How many rows a lookup reads at most to tell one row from several (as Django's
#: ``QuerySet.get`` does).
_MAX_ROWS = 20


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


@contextlib.contextmanager
def refused_as_tool_error(verbose_name: Any) -> Iterator[None]:
    """A refusal raised while saving (by a ``perform_*`` hook, or by the serializer's
    ``create``/``update``) as the tool error it is, which undoes the write with the
    action's transaction: DRF's ``ValidationError`` names its fields as an invalid input
    does; another ``APIException`` (``PermissionDenied``, ``NotFound``...) gives its
    detail, and so do Django's ``PermissionDenied`` and ``Http404``, which DRF's views
    answer 403 and 404 too. Left alone they would be -32603."""
    from django.core.exceptions import PermissionDenied
    from rest_framework.exceptions import APIException, ValidationError

    try:
        yield
    except ValidationError as exc:
        raise ToolError(f"Invalid {verbose_name}: {args.serializer_errors(exc.detail)}") from exc
    except APIException as exc:
        detail = exc.detail
        text = detail if isinstance(detail, str) else args.serializer_errors(detail)
        raise ToolError(str(text)) from exc
    except (PermissionDenied, Http404) as exc:
        raise ToolError(str(exc) or type(exc).__name__) from exc
