"""A paginator that never counts a whole large table (docs/guides/records.md, "At scale").

Why: Django's paginator asks ``COUNT(*)`` of the listed queryset on every page, and on
PostgreSQL a count reads every matching row (MVCC keeps no row count): about a second per
page at a few million rows. So the count is exact only while it is small: one bounded
count (``SELECT COUNT(*) FROM (... LIMIT n + 1)``) reads at most ``exact_up_to + 1`` rows.
Past that, PostgreSQL's own estimate stands in: ``pg_class.reltuples`` for the unfiltered
table (what ``ANALYZE`` and autovacuum keep), the planner's row estimate (``EXPLAIN``) for a
filtered list. Other databases count exactly, as before (they are for development; the
request log at scale is a PostgreSQL affair).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from django.core.paginator import Paginator
from django.db import connections
from django.db.models import QuerySet
from django.utils.functional import cached_property

if TYPE_CHECKING:
    _Paginator = Paginator[Any]
else:  # Paginator is generic only in the type stubs
    _Paginator = Paginator

#: Counts up to this many rows are exact on every database.
EXACT_UP_TO: Final = 10_000


class EstimatedCountPaginator(_Paginator):
    """Exact counts up to :data:`EXACT_UP_TO`, an estimate beyond (on PostgreSQL)."""

    exact_up_to: int = EXACT_UP_TO

    @cached_property
    def count(self) -> int:
        listed = self.object_list
        if not isinstance(listed, QuerySet):
            return super().count
        connection = connections[listed.db]
        if connection.vendor != "postgresql":
            return listed.count()
        bounded = listed.order_by()[: self.exact_up_to + 1].count()
        if bounded <= self.exact_up_to:
            return bounded
        return max(bounded, estimated_rows(listed))


def estimated_rows(queryset: QuerySet[Any]) -> int:
    """PostgreSQL's estimate of how many rows ``queryset`` lists (0 when it has none)."""
    connection = connections[queryset.db]
    with connection.cursor() as cursor:
        if not queryset.query.where:
            cursor.execute(
                "SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)",
                [connection.ops.quote_name(queryset.model._meta.db_table)],
            )
            found = cursor.fetchone()
            if found is not None and found[0] is not None and found[0] >= 0:
                return int(found[0])
        sql, params = queryset.order_by().values("pk").query.sql_with_params()
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        row = cursor.fetchone()
    plan: Any = row[0] if row is not None else [{"Plan": {"Plan Rows": 0}}]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return int(plan[0]["Plan"]["Plan Rows"])
