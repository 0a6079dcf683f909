"""Writing what one flush drained from the buffer: the rows, the summaries, the tallies.

Kept apart from :mod:`.recorder`, which owns the buffer, its locks and the thread: this
side knows nothing of either. It takes the drained records and says, in a
:class:`Drained`, what became of each one, so that every record ends up counted as
written or failed even when a batch raises half way (the recorder adds the counts in a
``finally``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import DatabaseError

from django_mcp.conf import mcp_settings
from django_mcp.requestlog import summaries, writer
from django_mcp.requestlog.models import ServedRevision
from django_mcp.requestlog.sanitise import all_sanitised
from django_mcp.requestlog.served import ServedKey, ServedTally, upsert_served

if TYPE_CHECKING:
    from django_mcp.requestlog.records import Row

logger = logging.getLogger("django_mcp")


@dataclass(slots=True)
class Drained:
    """What one flush did with its records, counted as it goes."""

    written: int = 0
    failed: int = 0
    #: Requests the flush could not add to the hourly summaries (their rows are unaffected).
    summary_failed: int = 0


def write(
    records: list[Row],
    unlogged: list[Row],
    served: dict[ServedKey, ServedTally],
    alias: str,
    counts: Drained,
) -> None:
    """Write ``records`` in batches, add them and ``unlogged`` to the summaries, upsert the
    best-effort tallies; count every outcome in ``counts``."""
    # Text no database would store must not fail a batch (made storable here, in the
    # writer, rather than on the request path).
    records = all_sanitised(records)
    batch_size = max(1, int(mcp_settings.REQUEST_LOG_BATCH_SIZE))
    try:
        for start in range(0, len(records), batch_size):
            outcome = writer.write(records[start : start + batch_size], alias)
            counts.written += outcome.written
            counts.failed += outcome.failed
        counts.summary_failed += summaries.add_or_log(records + unlogged, alias)
        _write_served(served, alias, counts)
    except writer.TableMissing as missing:
        lost = len(records) - counts.written
        logger.error(
            "django-mcp cannot write the request log: the table %s does not exist. Run "
            "`python manage.py migrate django_mcp`. %d records and %d best-effort tallies "
            "were counted as failed.",
            missing.table,
            lost,
            len(served),
        )
        counts.failed += lost + len(served)
        # Rows lost, so their requests were never summarised either.
        counts.summary_failed += len(records) + len(unlogged)


def _write_served(served: dict[ServedKey, ServedTally], alias: str, counts: Drained) -> None:
    """Upsert one ``ServedRevision`` row per triple seen since the last flush."""
    for key, tally in served.items():
        try:
            upsert_served(key, tally, alias)
        except DatabaseError as exc:
            if writer.table_missing(ServedRevision, alias, exc):
                raise writer.TableMissing(ServedRevision._meta.db_table) from exc
            logger.exception("django-mcp could not record best-effort serves of %s.", key[0])
            counts.failed += 1
