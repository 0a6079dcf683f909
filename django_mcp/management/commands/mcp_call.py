"""``manage.py mcp_call <tool> --arguments JSON [--user NAME] [--site NAME]``: call one tool
through the server's admission and dispatch and print the JSON-RPC response (see
:mod:`django_mcp.cli.call` for the exit statuses)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_mcp.cli.call import NOT_CALLED, call
from django_mcp.cli.identity import USER_ENVIRONMENT, resolve_user, site_named

if TYPE_CHECKING:
    from argparse import ArgumentParser


class Command(BaseCommand):
    help = "Call one MCP tool as a client would and print the JSON-RPC response."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        """Django's parser, whose usage errors exit :data:`NOT_CALLED`: argparse's own
        status, 2, is the one this command gives a protocol error, so a script could not
        tell a mistyped option from a refused call."""
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        usage_error = parser.error

        def error(message: str) -> Any:
            try:
                return usage_error(message)
            except SystemExit as exc:
                raise SystemExit(NOT_CALLED) from exc

        parser.error = error  # type: ignore[method-assign]
        return parser

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("tool", help="The tool's name.")
        parser.add_argument(
            "--arguments", default="{}", help="The arguments as a JSON object (default {})."
        )
        parser.add_argument(
            "--user", help=f"Call as this user (default: ${USER_ENVIRONMENT}, else anonymous)."
        )
        parser.add_argument("--site", help="The site's name (default: the default site).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            arguments = parse_arguments(options["arguments"])
            site = site_named(options["site"])
            user = resolve_user(options["user"])
        except CommandError as exc:  # before any call: not a tool error (status 1)
            raise CommandError(str(exc), returncode=NOT_CALLED) from exc
        status, message = call(site, options["tool"], arguments, user)
        self.stdout.write(printable(message, getattr(self.stdout, "encoding", None)))
        if status:
            sys.exit(status)


def printable(message: dict[str, Any], encoding: str | None) -> str:
    """``message`` as indented JSON, readable where stdout's ``encoding`` holds every
    character, else with JSON's ``\\u`` escapes (the same JSON): the tool has run, and
    its response must not be lost to a ``UnicodeEncodeError`` (a pipe on Windows is
    ``cp1252``; a lone surrogate, from a file name ``os.listdir`` decoded, is no UTF-8)."""
    text = json.dumps(message, indent=2, ensure_ascii=False)
    try:
        text.encode(encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return json.dumps(message, indent=2)
    return text


def parse_arguments(text: str) -> Any:
    """``--arguments`` decoded as strict JSON (RFC 8259): ``NaN`` and ``Infinity``, which
    Python's decoder takes and no JSON-RPC message can carry (the server refuses them with
    -32700), are refused, as is nesting too deep to decode; each a ``CommandError``."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise CommandError("--arguments is nested too deeply to decode") from exc
    except ValueError as exc:
        raise CommandError(f"--arguments is not JSON: {exc}") from exc


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")
