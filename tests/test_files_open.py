"""directory_resource when the file changes between the path check and the open.

server/resources.mdx, "Security Considerations": servers MUST validate all resource URIs
and prevent path traversal for file-style resources; server/resources.mdx, "Error
Handling": a resource that is not found is -32602 with ``data.uri``. ``safe_path`` checks a
path before it is opened, and the file system may change in between: the file deleted or
replaced by a directory, a FIFO, or a symlink leading out of the root. Each test stands in
for that race by approving the path without checking it (``safe_path`` monkeypatched) over
a real file-system state, and shows that the open itself refuses it as not found.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from django_mcp.declarations import files as files_module
from django_mcp.declarations.files import directory_resource
from django_mcp.protocol import errors
from tests.helpers import assert_error, read_resource, result_of

if TYPE_CHECKING:
    from pathlib import Path

    from django.test import Client

    from django_mcp.sites import MCPSite

pytestmark = pytest.mark.usefixtures("no_request_log")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """root/ with a file and a directory; a secret beside root."""
    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "today.md").write_text("# Today\n", encoding="utf-8")
    (root / "readme.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    return root


@pytest.fixture
def unchecked(mcp_site: MCPSite, root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``files://{+path}`` over ``root``, with the path check approving every path, as a
    race after a successful check would."""
    monkeypatch.setattr(files_module, "safe_path", lambda base, relative: base / relative)
    directory_resource(mcp_site, "files://{+path}", root)
    return root


def test_an_approved_path_is_still_served(client: Client, unchecked: Path) -> None:
    """server/resources.mdx, "Reading Resources": with the check out of the way, a plain
    file is read as before."""
    (item,) = result_of(read_resource(client, "files://notes/today.md"))["contents"]

    assert item["text"] == "# Today\n"


def replace_with_directory(root: Path) -> str:
    (root / "readme.txt").unlink()
    (root / "readme.txt").mkdir()
    return "readme.txt"


def delete(root: Path) -> str:
    (root / "readme.txt").unlink()
    return "readme.txt"


def dangle(root: Path) -> str:
    os.symlink(root / "nowhere.txt", root / "dangling.txt")
    return "dangling.txt"


def fifo(root: Path) -> str:
    os.mkfifo(root / "pipe.txt")  # opened for reading, it would wait for a writer
    return "pipe.txt"


@pytest.mark.parametrize("change", [delete, replace_with_directory, dangle, fifo])
def test_a_file_gone_or_unreadable_at_open_is_not_found(
    client: Client, unchecked: Path, change: object
) -> None:
    """server/resources.mdx, "Error Handling": a file deleted, replaced by a directory or a
    FIFO, or a dangling symlink, once the check has passed, is not found (-32602 with
    data.uri), never an internal error (and never a worker waiting on a FIFO)."""
    assert callable(change)
    uri = f"files://{change(unchecked)}"

    error = assert_error(read_resource(client, uri), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}
