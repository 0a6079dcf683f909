"""README.md: every relative link points at a file of the repository, and the two commands
of its Quickstart (``scripts/demo``, ``scripts/test``) exist and are executable."""

from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_every_relative_link_of_the_readme_exists() -> None:
    targets = re.findall(r"\]\(([^)\s]+)\)", README)
    relative = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t)]

    assert relative
    assert [t for t in relative if t and not (REPO / t).exists()] == []


def test_the_quickstart_commands_exist() -> None:
    for command in ("scripts/demo", "scripts/test"):
        assert f"{command} " in README
        assert os.access(REPO / command, os.X_OK), command


def test_the_readme_says_modeltools_need_the_drf_extra_in_both_install_forms() -> None:
    assert "pip install -e '/path/to/django-mcp[drf,channels]'" in README
    assert "pip install 'django-mcp[drf,channels]'" in README
    assert "**required for `ModelTools`**" in README
