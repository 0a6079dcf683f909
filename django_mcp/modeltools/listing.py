"""How a ``list`` action reads its rows so that paging and counting hold: an ordering
made total, and whether a search path can repeat a row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.exceptions import FieldDoesNotExist


def total_ordering(ordering: Sequence[Any], opts: Any) -> list[Any]:
    """``ordering`` made total with the primary key, as the admin's changelist does: pages
    are read by offset, and rows that tie (the same title) may come back in any order on
    each query, so a client paging through would be shown some rows twice and others
    never."""
    names = {item.lstrip("-") for item in ordering if isinstance(item, str)}
    if names & {"pk", opts.pk.name, opts.pk.attname}:
        return list(ordering)
    return [*ordering, opts.pk.name]


def spawns_duplicates(opts: Any, lookup: str) -> bool:
    """Whether filtering on ``lookup`` (``books__title``) goes through a many-valued
    relation, so that a row matching through several related rows comes back once per
    match (the admin's ``lookup_spawns_duplicates``)."""
    for part in lookup.split("__"):
        try:
            field = opts.get_field(part)
        except FieldDoesNotExist:
            return False  # a transform or lookup (``__iexact``): the path ends here
        if field.many_to_many or field.one_to_many:
            return True
        if not field.is_relation:
            return False
        opts = field.related_model._meta
    return False
