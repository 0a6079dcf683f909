"""A paginator that never counts a whole large table (docs/guides/records.md, "At scale").

Why: Django's paginator asks ``COUNT(*)`` of the listed queryset on every page, and on
PostgreSQL, MySQL and MariaDB a count reads every matching row or index entry (neither
MVCC engine keeps a row count): about a second per page at a few million rows. So the
count is exact only while it is small: one bounded count (``SELECT COUNT(*) FROM (...
LIMIT n + 1)``) reads at most ``exact_up_to + 1`` rows. Past that, the database's own
estimate stands in: for the unfiltered table, what statistics keep (PostgreSQL's
``pg_class.reltuples``, InnoDB's ``information_schema.TABLES.TABLE_ROWS``); for a filtered
list, the planner's row estimate (``EXPLAIN``). SQLite counts exactly, as before (it is
for development).

An estimate can be low (``reltuples`` lags a table that grew since autovacuum last ran;
MySQL 8 caches ``TABLE_ROWS`` for up to a day), and Django's paginator refuses any page
past the count and cuts the last page short at it. So from the estimate's last page on,
the rows actually there decide: the page asked for is read with one bounded query (at most
a page and one row), and the count becomes what it showed, so the page is whole and a next
page is offered while rows remain.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from django.contrib.admin.views.main import ChangeList
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
#: How far past a low estimate a page is still looked for, as a multiple of the estimate
#: (autovacuum re-estimates after a tenth of a table changed; a bulk load may outrun it).
SETTLE_REACH: Final = 10


class EstimatedCountPaginator(_Paginator):
    """Exact counts up to :data:`EXACT_UP_TO`, an estimate beyond (on PostgreSQL, MySQL
    and MariaDB)."""

    exact_up_to: int = EXACT_UP_TO
    #: Whether :attr:`count` is the database's estimate rather than a count (set by it).
    count_is_estimate: bool = False

    @cached_property
    def count(self) -> int:
        listed = self.object_list
        if not isinstance(listed, QuerySet):
            return super().count
        connection = connections[listed.db]
        if connection.vendor not in ESTIMATORS:
            return listed.count()
        bounded = listed.order_by()[: self.exact_up_to + 1].count()
        if bounded <= self.exact_up_to:
            return bounded
        self.count_is_estimate = True
        return max(bounded, estimated_rows(listed))

    def validate_number(self, number: Any) -> int:
        """Django's check, once an estimated count has been settled against the rows on
        the page asked for (:meth:`_settle_at`)."""
        if self.count and self.count_is_estimate:
            self._settle_at(number)
        return int(super().validate_number(number))

    def _settle_at(self, number: Any) -> None:
        """From the estimate's last page on, count what the page ``number`` holds (one
        bounded query) and take that as the count: ``bottom + rows`` is exact when the
        page is not full, and when a row lies past it the count says so, so the page
        after is offered. A page with no rows leaves the estimate to refuse it, and so
        does a page beyond :data:`SETTLE_REACH` times the estimate: its ``OFFSET`` would
        skip through more rows than the table is thought to hold (or overflow a bigint).
        The count is settled once: the admin validates the page number twice."""
        if isinstance(number, float) and not number.is_integer():
            return
        try:
            page = int(number)
        except (TypeError, ValueError):
            return  # Django's check says why
        if page < max(1, self.num_pages):
            return
        bottom = (page - 1) * self.per_page
        if bottom > SETTLE_REACH * max(self.count, self.exact_up_to):
            return
        self.count_is_estimate = False  # settled, whatever the page holds
        listed = self.object_list
        assert isinstance(listed, QuerySet)  # an estimate is only ever of a queryset
        # A page may take ``orphans`` rows more than ``per_page``: one past those says
        # that a next page exists.
        rows = listed.order_by()[bottom : bottom + self.per_page + self.orphans + 1].count()
        if rows:
            self.__dict__["count"] = bottom + rows
            self.__dict__.pop("num_pages", None)  # cached from the estimate


class SettledCountChangeList(ChangeList):
    """The admin's changelist, whose "N entries" follows the paginator's count once the
    page asked for settled it (Django reads the count before it asks for the page)."""

    def get_results(self, request: Any) -> None:
        super().get_results(request)
        self.result_count = self.paginator.count

    def get_ordering_field(self, field_name: Any) -> Any:
        """None (not sortable: ``?o=`` on it is skipped) for a column the admin's
        ``get_sortable_by`` leaves out; Django only hides its header link."""
        if self.sortable_by is not None and field_name not in self.sortable_by:
            return None
        return super().get_ordering_field(field_name)


def estimated_rows(queryset: QuerySet[Any]) -> int:
    """The database's estimate of how many rows ``queryset`` lists (0 when it has none)."""
    connection = connections[queryset.db]
    estimator = ESTIMATORS[connection.vendor]
    with connection.cursor() as cursor:
        return estimator(queryset, connection, cursor)


def _postgresql_rows(queryset: QuerySet[Any], connection: Any, cursor: Any) -> int:
    """``pg_class.reltuples`` for the whole table, the planner's estimate for a filter."""
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


def _mysql_rows(queryset: QuerySet[Any], connection: Any, cursor: Any) -> int:
    """InnoDB's ``TABLE_ROWS`` for the whole table; for a filter, the optimizer's rows
    to examine (``EXPLAIN``'s ``rows``), times the share it expects to keep (``filtered``,
    a percentage, on MySQL; MariaDB's plain ``EXPLAIN`` has no such column)."""
    if not queryset.query.where:
        cursor.execute(
            "SELECT TABLE_ROWS FROM information_schema.TABLES"
            " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s",
            [queryset.model._meta.db_table],
        )
        found = cursor.fetchone()
        if found is not None and found[0] is not None:
            return int(found[0])
    sql, params = queryset.order_by().values("pk").query.sql_with_params()
    cursor.execute(f"EXPLAIN {sql}", params)
    columns = [column[0].lower() for column in cursor.description]
    row = cursor.fetchone()
    if row is None:
        return 0
    plan = dict(zip(columns, row, strict=True))
    rows = float(plan.get("rows") or 0)
    share = plan.get("filtered")
    return int(rows * float(share) / 100) if share is not None else int(rows)


#: The databases that estimate, by vendor: the others count exactly.
ESTIMATORS: Final[dict[str, Callable[[QuerySet[Any], Any, Any], int]]] = {
    "postgresql": _postgresql_rows,
    "mysql": _mysql_rows,
}
