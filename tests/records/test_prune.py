"""``manage.py mcp_prune_logs`` deletes request log rows by age, and only those."""

from __future__ import annotations

from functools import partial

import pytest
from django.core.management import CommandError

from django_mcp.requestlog.models import RequestLog
from tests.commands import command_output
from tests.records.support import log_row

pytestmark = pytest.mark.django_db

prune = partial(command_output, "mcp_prune_logs")


def test_prune_deletes_only_rows_older_than_the_given_days():
    old = log_row(days_ago=40)
    recent = log_row(days_ago=10)

    output = prune("--days", "30")

    assert "Deleted 1 " in output
    assert list(RequestLog.objects.all()) == [recent]
    assert not RequestLog.objects.filter(pk=old.pk).exists()


def test_prune_keeps_thirty_days_by_default():
    log_row(days_ago=31)
    kept = log_row(days_ago=29)

    prune()

    assert list(RequestLog.objects.all()) == [kept]


def test_a_dry_run_reports_the_count_and_deletes_nothing():
    log_row(days_ago=40)
    log_row(days_ago=50)

    output = prune("--days", "30", "--dry-run")

    assert "Would delete 2 " in output
    assert RequestLog.objects.count() == 2


def test_prune_deletes_a_backlog_larger_than_one_batch():
    for days in range(40, 47):
        log_row(days_ago=days)
    kept = log_row(days_ago=1)

    output = prune("--days", "30", "--batch-size", "3")

    assert "Deleted 7 " in output
    assert list(RequestLog.objects.all()) == [kept]


@pytest.mark.parametrize(
    "args",
    [("--days", "-1"), ("--batch-size", "0"), ("--batch-size", "100000000000000000000")],
)
def test_prune_refuses_nonsense_arguments(args):
    with pytest.raises(CommandError):
        prune(*args)


def test_best_effort_tallies_not_seen_within_the_summary_retention_are_pruned():
    """A client that declares a newer dated revision under a new client name on every
    request adds a ``ServedRevision`` row each time (one per revision, name and version);
    nothing deleted them, so the table only grew. They go with the summaries' retention,
    by when each was last seen; a dry run counts them and deletes none."""
    import datetime

    from django.utils import timezone

    from django_mcp.requestlog.models import ServedRevision

    now = timezone.now()

    def tally(name: str, days_ago: int) -> ServedRevision:
        seen = now - datetime.timedelta(days=days_ago)
        return ServedRevision.objects.create(
            revision="2099-01-01", client_name=name, count=1, first_seen=seen, last_seen=seen
        )

    tally("gone", 20)
    tally("gone too", 11)
    kept = tally("recent", 9)

    assert "and 2 best-effort revision tallies" in prune("--summary-days", "10", "--dry-run")
    assert ServedRevision.objects.count() == 3
    output = prune("--summary-days", "10", "--batch-size", "1")
    assert "and 2 best-effort revision tallies last seen before then" in output
    assert list(ServedRevision.objects.all()) == [kept]
