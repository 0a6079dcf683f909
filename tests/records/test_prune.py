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
