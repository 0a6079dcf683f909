"""``manage.py mcp_stdio [--user NAME] [--site NAME]``: serve a site over stdio, the way a
desktop client launches a local MCP server (see :mod:`django_mcp.stdio.transport`).

stdout carries protocol messages only: the command's own output and anything a handler
prints go to stderr. The caller is ``--user``, else ``$DJANGO_MCP_USER``, else anonymous.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand

from django_mcp.cli.identity import USER_ENVIRONMENT, resolve_user, site_named
from django_mcp.conf import mcp_settings
from django_mcp.server.dispatch import MCPServer
from django_mcp.stdio.transport import StdioServer, bounded_lines

if TYPE_CHECKING:
    from argparse import ArgumentParser


class Command(BaseCommand):
    help = "Serve MCP over stdin/stdout (newline-delimited JSON-RPC), for local clients."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--user", help=f"Serve as this user (default: ${USER_ENVIRONMENT}, else anonymous)."
        )
        parser.add_argument("--site", help="The site's name (default: the default site).")

    def handle(self, *args: Any, **options: Any) -> None:
        site = site_named(options["site"])
        user = resolve_user(options["user"])
        protocol_out = sys.stdout.buffer
        server = StdioServer(MCPServer(site), protocol_out, user=user)
        with contextlib.redirect_stdout(sys.stderr):  # a stray print() must not corrupt
            server.serve(bounded_lines(sys.stdin.buffer, int(mcp_settings.MAX_REQUEST_BYTES)))
