"""``manage.py mcp_rebuild_log_summaries [--since DATE]``: recount the hourly summaries
and daily summaries the dashboard reads from the request log's rows.

For a log filled before migration 0006 (which has rows but no summaries), a log filled by
``scripts/fill_request_log.py``, or summaries a failed flush left short (the recorder
counts those in ``summary_failed``). It replaces the summaries from the UTC day of
``--since`` on (all of them without it) in one transaction, with one
``INSERT ... SELECT ... GROUP BY`` over the rows (:func:`~django_mcp.requestlog.summaries.rebuild`).
Rows are all it can count: if the log is sampled, a rebuilt hour shows the logged requests
only, and an hour the recorder is still writing may be counted while it changes, so run it
over past hours, or before serving.
"""

from __future__ import annotations

import datetime
import time
from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError
from django.db import router
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from django_mcp.requestlog import summaries, tallies
from django_mcp.requestlog.models import RequestLogHour

if TYPE_CHECKING:
    from argparse import ArgumentParser


def parse_since(text: str) -> datetime.datetime:
    """An ISO date or date-time; a naive one is in the current time zone. One in the
    right shape that no calendar holds (February 30th, 25:00, a UTC day before year 1 or
    after 9999) is refused like any unreadable one, not raised as a traceback."""
    try:
        when = parse_datetime(text)
        if when is None:
            day = parse_date(text)
            if day is None:
                raise CommandError(f"--since {text!r} is not a date (YYYY-MM-DD[THH:MM]).")
            when = datetime.datetime.combine(day, datetime.time())
        if timezone.is_naive(when):
            when = timezone.make_aware(when)
        tallies.day_of(when)  # the UTC day the rebuild starts on
    except (ValueError, OverflowError) as exc:
        raise CommandError(f"--since {text!r} is not a possible date-time: {exc}") from exc
    return when


class Command(BaseCommand):
    help = "Recount django-mcp's request log hourly summaries from the log's rows."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--since",
            default=None,
            help="Only hours from this date or date-time on (default: every hour).",
        )

    def handle(self, *args: Any, since: str | None, **options: Any) -> None:
        start = parse_since(since) if since else None
        began = time.perf_counter()
        hours, days = summaries.rebuild(start, router.db_for_write(RequestLogHour))
        elapsed = time.perf_counter() - began
        what = f"from {tallies.day_of(start):%Y-%m-%d} (UTC)" if start else "of the whole log"
        self.stdout.write(
            self.style.SUCCESS(
                f"Rebuilt {hours} hourly and {days} daily summaries {what} in {elapsed:.1f} s."
            )
        )
