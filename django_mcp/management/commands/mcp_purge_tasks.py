"""``manage.py mcp_purge_tasks``: delete MCP tasks whose TTL has passed.

An expired task already answers -32602 ("Task has expired"); this command removes its row,
with its arguments, answers and result. Run it from cron or a scheduler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand

from django_mcp.tasks import store

if TYPE_CHECKING:
    from argparse import ArgumentParser


class Command(BaseCommand):
    help = "Delete django-mcp tasks whose TTL has passed."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--dry-run", action="store_true", help="Only report how many would be deleted."
        )

    def handle(self, *args: Any, dry_run: bool, **options: Any) -> None:
        if dry_run:
            count = store.expired().count()
            self.stdout.write(f"{count} expired task(s) would be deleted.")
            return
        count = store.purge()
        self.stdout.write(f"Deleted {count} expired task(s).")
