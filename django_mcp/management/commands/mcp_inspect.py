"""``manage.py mcp_inspect [--site NAME] [--format table|json]``: every declaration of
every site with its schemas, permissions and annotations (see
:mod:`django_mcp.cli.inspect`). Exits 1 when the system checks report errors, after
printing them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar

from django.core.management.base import BaseCommand

from django_mcp.cli.identity import site_named
from django_mcp.cli.inspect import as_json, as_table, check_errors, describe_site
from django_mcp.sites import all_sites, site

if TYPE_CHECKING:
    from argparse import ArgumentParser


class Command(BaseCommand):
    help = "List every MCP declaration per site, with schemas, permissions and annotations."
    # The checks run below, reported after the listing instead of aborting before it.
    requires_system_checks: ClassVar[list[str]] = []  # type: ignore[misc]

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--site", help="Only this site (default: every site).")
        parser.add_argument("--format", choices=["table", "json"], default="table")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["site"] is not None:
            sites = [site_named(options["site"])]
        else:
            named = {s.name: s for s in all_sites()}
            named[site.name] = site
            sites = [named[name] for name in sorted(named)]
        report = [describe_site(s) for s in sites]
        render = as_json if options["format"] == "json" else as_table
        self.stdout.write(escaped(render(report), getattr(self.stdout, "encoding", None)))
        errors = check_errors()
        for message in errors:
            self.stderr.write(str(message))
        if errors:
            self.stderr.write(f"System checks found {len(errors)} error(s).")
            sys.exit(1)


def escaped(text: str, encoding: str | None) -> str:
    """``text`` with what stdout's ``encoding`` cannot hold (``cp1252``, a Windows pipe,
    has no Japanese) written as ``\\u`` escapes, not lost to a ``UnicodeEncodeError``:
    resource URIs and argument names need not be ASCII. JSON output is ASCII already."""
    if not encoding:
        return text
    return text.encode(encoding, "backslashreplace").decode(encoding)
