"""docs/reference.md names every public name of ``django_mcp`` and ``django_mcp.test``, so
a name added to either ``__all__`` without a line in the reference fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import get_commands

import django_mcp
import django_mcp.test

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
#: The first cell of each table row: the name it documents.
ROWS = set(re.findall(r"^\| `([^`]+)` \|", PAGE, re.M))


@pytest.mark.parametrize("name", django_mcp.__all__)
def test_every_public_name_of_django_mcp_has_a_row(name: str) -> None:
    assert name in ROWS, f"add `{name}` to docs/reference.md"


@pytest.mark.parametrize("name", django_mcp.test.__all__)
def test_every_public_name_of_django_mcp_test_has_a_row(name: str) -> None:
    assert name in ROWS, f"add `{name}` to docs/reference.md"


def test_every_management_command_of_django_mcp_has_a_row() -> None:
    commands = sorted(name for name, app in get_commands().items() if app == "django_mcp")
    documented = {row.split()[0] for row in ROWS}

    assert commands
    assert [name for name in commands if name not in documented] == []


def test_the_reference_links_the_settings_and_checks_pages() -> None:
    assert "(settings.md)" in PAGE
    assert "(checks.md)" in PAGE
