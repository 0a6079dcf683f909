"""``manage.py mcp_create_token <username>``: issue an MCP access token and print it once.

The token is stored hashed; this is the only time its plaintext exists, so the command
prints it alone on stdout (and the details on stderr), ready for ``TOKEN=$(...)``.
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from django_mcp.auth.models import (
    EXPIRY_OUT_OF_RANGE,
    AccessToken,
    expiry_out_of_range,
    parse_scopes,
)
from django_mcp.cli.identity import storable

if TYPE_CHECKING:
    from argparse import ArgumentParser

DURATION = re.compile(r"\A(\d+)([mhdw])\Z")
UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_expiry(value: str) -> datetime.datetime:
    """``30d``/``12h``/``15m``/``2w`` from now, or an ISO 8601 date-time, in the future.

    An impossible date (month 13), a duration past the calendar's end (year 9999) and a
    moment already past are refused: a token dead on arrival would print its secret and
    fail every request with 401."""
    now = timezone.now()
    try:
        when = _expiry(value, now)
    except (ValueError, OverflowError) as exc:
        raise CommandError(f"--expires {value!r} is not a possible date-time: {exc}") from exc
    if when <= now:
        raise CommandError(f"--expires {value!r} is not in the future")
    if expiry_out_of_range(when):  # 9999-12-31T23:59:59-05:00 is year 10000 in UTC
        raise CommandError(f"--expires {value!r}: {EXPIRY_OUT_OF_RANGE}")
    return when


def _expiry(value: str, now: datetime.datetime) -> datetime.datetime:
    match = DURATION.match(value)
    if match:
        return now + datetime.timedelta(**{UNITS[match[2]]: int(match[1])})
    when = parse_datetime(value)
    if when is None:
        raise CommandError(f"--expires {value!r}: use e.g. 30d, 12h, or an ISO date-time")
    return timezone.make_aware(when) if timezone.is_naive(when) else when


class Command(BaseCommand):
    help = "Create an MCP access token for a user and print it (shown only this once)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--scope",
            action="append",
            default=[],
            help="A scope the token grants (repeat, or space-separate); none: no scope.",
        )
        parser.add_argument("--expires", help="Lifetime (30d, 12h, 15m, 2w) or ISO date-time.")
        parser.add_argument("--name", default="", help="What the token is for.")

    def handle(self, *args: Any, **options: Any) -> None:
        for what, text in [
            ("The username", options["username"]),
            ("--name", options["name"]),
            *(("--scope", scope) for scope in options["scope"]),
        ]:
            if not storable(text):
                raise CommandError(f"{what} {text!r} is not UTF-8")
            if "\x00" in text:  # PostgreSQL refuses it in text: a DataError traceback
                raise CommandError(f"{what} holds a NUL character")
        # Checked here, not by the database: PostgreSQL refused a longer value with a
        # DataError traceback, and SQLite kept it whole.
        scopes = " ".join(parse_scopes(options["scope"]))
        for what, text, field in [
            ("--name", options["name"], "name"),
            ("--scope", scopes, "scopes"),
        ]:
            limit = getattr(AccessToken._meta.get_field(field), "max_length", None)
            if limit is not None and len(text) > limit:
                raise CommandError(f"{what} is longer than {limit} characters")
        user_model = get_user_model()
        try:
            user = user_model._default_manager.get_by_natural_key(options["username"])
        except user_model.DoesNotExist as exc:
            raise CommandError(f"No user {options['username']!r}") from exc
        if not getattr(user, "is_active", True):  # every authenticator refuses its tokens
            raise CommandError(f"The user {options['username']!r} is inactive")
        expires = parse_expiry(options["expires"]) if options["expires"] else None
        token, plaintext = AccessToken.objects.issue(
            user, name=options["name"], scopes=options["scope"], expires_at=expires
        )
        self.stderr.write(
            f"Created {token} for {user.get_username()}; scopes: {token.scopes or '(none)'}; "
            f"expires: {token.expires_at or 'never'}. It will not be shown again."
        )
        self.stdout.write(plaintext)
