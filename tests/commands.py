"""Run a management command in the test process and return what it printed."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command


def command_output(name: str, *args: str) -> str:
    """``manage.py NAME ARGS`` in-process; its standard output."""
    out = StringIO()
    call_command(name, *args, stdout=out)
    return out.getvalue()
