"""How a ``list`` action reads its rows so that paging holds: an ordering made total;
and which search paths it can search at all. (Whether a search path repeats rows is the
admin's own ``lookup_spawns_duplicates``.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def total_ordering(ordering: Sequence[Any], opts: Any) -> list[Any]:
    """``ordering`` made total with the primary key, as the admin's changelist does: pages
    are read by offset, and rows that tie (the same title) may come back in any order on
    each query, so a client paging through would be shown some rows twice and others
    never."""
    names = {item.lstrip("-") for item in ordering if isinstance(item, str)}
    if names & {"pk", opts.pk.name, opts.pk.attname}:
        return list(ordering)
    return [*ordering, opts.pk.name]


def search_path_problems(model: Any, path: str) -> list[str]:
    """Why ``path`` (a ``search_fields`` entry whose first part is a field) cannot be
    searched with ``icontains``: a part that names no field of the model before it, a part
    after a field that is no relation unless it is a transform of that field (a lookup
    such as ``name__exact``; ``published__year`` is searched as Django searches it), or a
    path ending at a relation (``author``: Django refuses ``icontains`` on it). Each failed every
    search of the list as -32603 at run time, while the system check said nothing."""
    from django.core.exceptions import FieldDoesNotExist

    current: Any = model
    field: Any = None
    for part in path.split("__"):
        if current is None:
            get_transform = getattr(field, "get_transform", None)
            if get_transform is not None and get_transform(part) is not None:
                return []  # a transform (published__year, name__unaccent): icontains follows
            return [
                f"search_fields names {path!r}: {field.name!r} is no relation, so "
                f"{part!r} cannot follow it"
            ]
        try:
            field = current._meta.get_field(current._meta.pk.name if part == "pk" else part)
        except FieldDoesNotExist:
            return [
                f"search_fields names {path!r}: {part!r} is not a field of {current._meta.label}"
            ]
        current = field.related_model if field.is_relation else None
    if field is not None and field.is_relation:
        return [
            f"search_fields names {path!r}, a relation: name a field of it to search, "
            f"such as '{path}__<field>'"
        ]
    return []
