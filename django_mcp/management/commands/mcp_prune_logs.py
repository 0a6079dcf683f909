"""``manage.py mcp_prune_logs``: delete request log rows older than N days, and hourly
and daily summaries older than ``REQUEST_LOG_SUMMARY_DAYS`` (or ``--summary-days``), with
the best-effort revision tallies last seen before then.

The summaries have a retention of their own, longer by default: they hold no personal
data and one row per hour and target, so the dashboard can show months the rows are gone for.
The best-effort tallies (:class:`~django_mcp.requestlog.models.ServedRevision`) are kept as
long: one row per revision and client name and version a client declared, so a client that
names itself anew on every request adds a row each time, and without a retention the table
would only grow.

Pruning is a command rather than something the recorder does on its own so that the
retention period is an operator's decision, run from cron or a scheduler at a quiet hour.
Rows are deleted in primary-key batches so a large backlog never becomes one long
transaction holding locks on a table the recorder keeps inserting into.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError
from django.db import router
from django.utils import timezone

from django_mcp.conf import mcp_settings
from django_mcp.requestlog import summaries
from django_mcp.requestlog.models import RequestLog, RequestLogHour, ServedRevision

if TYPE_CHECKING:
    from argparse import ArgumentParser

    from django.db.models import QuerySet

DEFAULT_DAYS = 30
DEFAULT_BATCH_SIZE = 10_000
#: The largest ``--batch-size``: one statement deleting more is the long transaction the
#: batches exist to avoid, and a much larger number overflows the database's integer
#: (SQLite answered a traceback, "datatype mismatch").
MAX_BATCH_SIZE = 1_000_000


class Command(BaseCommand):
    help = (
        "Delete django-mcp request log entries older than --days days (default 30), and "
        "hourly summaries and best-effort revision tallies older than --summary-days "
        "(default REQUEST_LOG_SUMMARY_DAYS)."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--days",
            type=int,
            default=DEFAULT_DAYS,
            help=f"Keep entries from the last N days (default {DEFAULT_DAYS}).",
        )
        parser.add_argument(
            "--summary-days",
            type=int,
            default=None,
            help="Keep hourly summaries from the last N days (default REQUEST_LOG_SUMMARY_DAYS).",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Only report how many entries would be deleted.",
        )
        parser.add_argument(
            "--batch-size",
            type=int,
            default=DEFAULT_BATCH_SIZE,
            help=f"Rows deleted per statement (default {DEFAULT_BATCH_SIZE}).",
        )

    def handle(
        self,
        *args: Any,
        days: int,
        summary_days: int | None,
        dry_run: bool,
        batch_size: int,
        **options: Any,
    ) -> None:
        if summary_days is None:
            summary_days = int(mcp_settings.REQUEST_LOG_SUMMARY_DAYS)
        if days < 0 or summary_days < 0:
            raise CommandError("--days and --summary-days must be 0 or more.")
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise CommandError(f"--batch-size must be from 1 to {MAX_BATCH_SIZE:_}.")
        now = timezone.now()
        try:
            cutoff = now - datetime.timedelta(days=days)
            summary_cutoff = now - datetime.timedelta(days=summary_days)
        except OverflowError as exc:  # further back than the calendar goes (year 1)
            raise CommandError(f"--days or --summary-days is out of range: {exc}") from exc
        old = RequestLog.objects.filter(started_at__lt=cutoff)
        unseen = ServedRevision.objects.filter(last_seen__lt=summary_cutoff)
        if dry_run:
            count = old.count()
            expired = summaries.expired(summary_cutoff, router.db_for_read(RequestLogHour))
            hours = sum(rows.count() for rows in expired)
            self.stdout.write(
                f"Would delete {count} request log entries older than {cutoff:%Y-%m-%d %H:%M} "
                f"and {hours} hourly and daily summaries older than {summary_cutoff:%Y-%m-%d}, "
                f"and {unseen.count()} best-effort revision tallies last seen before then."
            )
            return
        hours = summaries.prune(summary_cutoff, router.db_for_write(RequestLogHour))
        deleted = delete_in_batches(old, batch_size)
        tallies = delete_in_batches(unseen, batch_size)
        self.stdout.write(
            self.style.SUCCESS(
                f"Deleted {deleted} request log entries older than {cutoff:%Y-%m-%d %H:%M} "
                f"and {hours} hourly and daily summaries older than {summary_cutoff:%Y-%m-%d}, "
                f"and {tallies} best-effort revision tallies last seen before then."
            )
        )


def delete_in_batches(rows: QuerySet[Any], batch_size: int) -> int:
    """Delete ``rows`` in ascending primary-key batches of ``batch_size``; return the count.

    Each batch is bounded by the key of its last row (``pk <= boundary``) rather than
    ``pk IN (...)``: no bound-parameter limit on SQLite, no LIMIT in a subquery on MySQL.
    """
    keys = rows.order_by("pk").values_list("pk", flat=True)
    deleted = 0
    while True:
        boundary = list(keys[batch_size - 1 : batch_size])
        batch = rows.filter(pk__lte=boundary[0]) if boundary else rows
        count, _ = batch.delete()
        deleted += count
        if not boundary:
            return deleted
