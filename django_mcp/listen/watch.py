"""Announce model changes to ``subscriptions/listen`` streams.

``watch(Book, uri="books://{isbn}")`` connects ``post_save`` and
``post_delete``: once the transaction commits, ``notifications/resources/updated`` goes to
every stream subscribed to that URI (or to a declared template matching it) whose
caller may read it, in every process. The event names the row too (its model and primary
key, never sent to clients), so a template that can tell who sees which row (a
``ModelTools`` one, through ``row_visible``) asks about the row that changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from django.db import router, transaction
from django.db.models import Model
from django.db.models.signals import post_delete, post_save

from django_mcp.listen.fanout import notify_row_updated
from django_mcp.protocol.uritemplate import URITemplate, expand

if TYPE_CHECKING:
    from django_mcp.sites import MCPSite


def watch(
    model: type[Model],
    *,
    uri: str | Callable[[Any], str],
    site: MCPSite | None = None,
) -> Callable[..., None]:
    """Publish ``resources/updated`` for the instance's URI after each committed save or
    delete of ``model``. ``uri`` is a URI template whose variables name the instance's
    attributes (``"books://{isbn}"``), expanded as RFC 6570 says, percent-encoding and all,
    so the URI announced is the one a client reads and subscribes to; or a function of
    the instance. Returns the signal receiver (to disconnect it in tests)."""
    uri_of = uri if callable(uri) else _expander(uri)

    def receiver(sender: type[Model], instance: Model, **kwargs: Any) -> None:
        target, row = uri_of(instance), row_of(instance)
        using = kwargs.get("using") or router.db_for_write(sender)
        transaction.on_commit(lambda: notify_row_updated(target, row, site=site), using=using)

    uid = _dispatch_uid(model, receiver)
    post_save.connect(receiver, sender=model, weak=False, dispatch_uid=uid + ":save")
    post_delete.connect(receiver, sender=model, weak=False, dispatch_uid=uid + ":delete")
    return receiver


def _expander(template: str) -> Callable[[Any], str]:
    """The URI of an instance under ``template``, each variable its attribute's value
    (checked now: a template the matcher cannot read is refused at ``watch`` time)."""
    names = URITemplate(template).variables

    def uri_of(instance: Any) -> str:
        return expand(template, {name: str(getattr(instance, name)) for name in names})

    return uri_of


def row_of(instance: Model) -> dict[str, Any]:
    """The row a change event names: its model's label and its primary key, as a value
    any channel layer carries (an integer or a string; a UUID or other key as its
    string, which the field converts back when the row is looked up; a composite key,
    Django's ``CompositePrimaryKey``, as a list of those, which :func:`pk_of` turns back
    into the tuple ``filter(pk=...)`` takes)."""
    pk = instance.pk
    return {
        "model": instance._meta.label,
        "pk": [_carried(part) for part in pk] if isinstance(pk, tuple) else _carried(pk),
    }


def pk_of(row: Mapping[str, Any]) -> Any:
    """The primary key :func:`row_of` carried, as ``filter(pk=...)`` takes it."""
    pk = row.get("pk")
    return tuple(pk) if isinstance(pk, list) else pk


def _carried(value: Any) -> int | str:
    return value if isinstance(value, int | str) and not isinstance(value, bool) else str(value)


def unwatch(model: type[Model], receiver: Callable[..., None]) -> None:
    """Disconnect a receiver returned by :func:`watch`."""
    # Connected with a dispatch_uid, so only that uid finds it again (not the receiver).
    uid = _dispatch_uid(model, receiver)
    post_save.disconnect(sender=model, dispatch_uid=uid + ":save")
    post_delete.disconnect(sender=model, dispatch_uid=uid + ":delete")


def _dispatch_uid(model: type[Model], receiver: Callable[..., None]) -> str:
    return f"django_mcp.listen.watch:{model._meta.label}:{id(receiver)}"
