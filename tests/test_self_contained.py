"""The repository is self-contained: no tracked file names a path outside the checkout.

A fresh clone must run its tests and read its docs with nothing beside it, so no tracked
text file may mention the notes that once lived next to the repository: the sibling
``shared`` folder (by relative path or by its ``spec`` subfolder), the absolute parent
directory of this checkout, or sections and cards of the outside design and research notes.
Cite the spec page (``server/tools.mdx``) or the project's own docs and ADRs instead.

The patterns are assembled from pieces below, so this file does not contain them and needs
no exemption. The list of tracked files comes from ``git ls-files``; without git, or outside
a git checkout, the test is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: Path fragments that point outside the repository.
OUTSIDE_PATHS = ("/".join(["..", "shared"]), "/".join(["shared", "spec", ""]))

#: Citations of the outside notes (matched case-insensitively).
OUTSIDE_DOCUMENTS = tuple(
    " ".join(words) for words in (("design", "section"), ("digest", "section"), ("design", "card"))
)


def tracked_files() -> list[str]:
    """Paths of the tracked files, relative to the repository root."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed, so the tracked files cannot be listed")
    listed = subprocess.run(
        [git, "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip(f"{REPO} is not a git checkout: {listed.stderr.decode(errors='replace')}")
    return [name for name in listed.stdout.decode("utf-8").split("\0") if name]


def parent_prefixes() -> set[str]:
    """The checkout's parent directory as a path prefix (``/parent/``), in its spellings.

    Left out when the parent is the filesystem root or the temporary directory: their paths
    (``/``, ``/tmp/``) are legitimately written in docs and scripts, so a checkout placed
    directly under them could not tell an outside reference from an ordinary one.
    """
    ordinary = {Path(os.sep), Path(tempfile.gettempdir()).resolve()}
    prefixes = set()
    for root in (REPO, Path(os.path.abspath(__file__)).parents[1]):
        if root.parent in ordinary or root.parent.resolve() in ordinary:
            continue
        prefixes.add(str(root.parent) + os.sep)
        prefixes.add(root.parent.as_posix() + "/")
    return prefixes


def read_text(name: str) -> str | None:
    """The text of a tracked file, or None for binary, non-UTF-8, missing or symlinked ones."""
    path = REPO / name
    if path.is_symlink() or not path.is_file():
        return None
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def outside_references(name: str, text: str, prefixes: set[str]) -> list[str]:
    """``file:line: pattern`` for every outside reference in one file."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        lowered = line.lower()
        hits = [p for p in (*OUTSIDE_PATHS, *sorted(prefixes)) if p in line]
        hits += [phrase for phrase in OUTSIDE_DOCUMENTS if phrase in lowered]
        found += [f"{name}:{number}: {hit!r}: {line.strip()}" for hit in hits]
    return found


def references_by_file() -> dict[str, list[str]]:
    prefixes = parent_prefixes()
    found = {}
    for name in tracked_files():
        text = read_text(name)
        if text is not None and (lines := outside_references(name, text, prefixes)):
            found[name] = lines
    return found


def test_no_tracked_file_names_a_path_or_document_outside_the_repository():
    found = references_by_file()
    offending = [line for lines in found.values() for line in lines]
    assert not offending, "outside references (cite the spec page or docs/ instead):\n" + (
        "\n".join(offending)
    )
