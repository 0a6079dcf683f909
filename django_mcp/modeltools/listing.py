"""How a ``list`` action reads its rows so that paging holds: an ordering made total.
(Whether a search path repeats rows is the admin's own ``lookup_spawns_duplicates``.)"""

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
