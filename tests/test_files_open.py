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


@pytest.fixture
def links(root: Path) -> Path:
    """Symlinks in root: to a file outside, to a directory outside, to a file inside."""
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "key.txt").write_text("KEY", encoding="utf-8")
    os.symlink(root.parent / "secret.txt", root / "leak.txt")
    os.symlink(outside, root / "door")
    os.symlink(root / "readme.txt", root / "alias.txt")
    return root


@pytest.mark.parametrize("uri", ["files://leak.txt", "files://door/key.txt"])
def test_a_symlink_swapped_in_after_the_check_is_refused_at_open(
    client: Client, unchecked: Path, links: Path, uri: str
) -> None:
    """server/resources.mdx, "Security Considerations": a symlink that leads out of the
    root, there when the file is opened though the check approved the path (a race), is
    refused by the open itself: every component is opened below the root's descriptor
    without following symlinks. Not found, and nothing of the file outside."""
    response = read_resource(client, uri)

    error = assert_error(response, 200, errors.INVALID_PARAMS)
    assert error["data"] == {"uri": uri}
    assert b"SECRET" not in response.content
    assert b"KEY" not in response.content


def test_a_dot_dot_approved_by_the_check_is_refused_at_open(
    client: Client, mcp_site: MCPSite, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """server/resources.mdx, "Security Considerations": the open walks only names below
    the root, so even a ``..`` the check let through does not leave it."""
    monkeypatch.setattr(
        files_module, "safe_path", lambda base, relative: base.resolve() / "../secret.txt"
    )
    directory_resource(mcp_site, "files://{+path}", root)

    response = read_resource(client, "files://readme.txt")

    assert_error(response, 200, errors.INVALID_PARAMS)
    assert b"SECRET" not in response.content


def test_a_symlink_inside_the_root_is_followed_through_the_checked_path(
    client: Client, mcp_site: MCPSite, links: Path
) -> None:
    """server/resources.mdx, "Security Considerations": a symlink that stays inside the
    root is still served, because the check resolves it and the open walks the resolved
    path, which has no symlink to follow."""
    directory_resource(mcp_site, "files://{+path}", links)

    (item,) = result_of(read_resource(client, "files://alias.txt"))["contents"]

    assert (item["uri"], item["text"]) == ("files://alias.txt", "hello")


def test_without_dir_fd_the_checked_path_is_opened_directly(
    client: Client, mcp_site: MCPSite, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """server/resources.mdx, "Reading Resources": where ``os.open`` takes no ``dir_fd``
    (Windows), the checked path is opened as it is, so files are still served (the
    component-by-component open is a POSIX defence on top of the check)."""
    real_open = os.open

    def windows_open(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if dir_fd is not None:
            raise NotImplementedError("dir_fd unavailable on this platform")
        return real_open(path, flags, mode)

    monkeypatch.setattr(os, "open", windows_open)
    monkeypatch.setattr(os, "supports_dir_fd", set())
    for flag in ("O_NOFOLLOW", "O_DIRECTORY", "O_CLOEXEC", "O_NONBLOCK"):
        monkeypatch.delattr(os, flag)
    directory_resource(mcp_site, "files://{+path}", root)

    (item,) = result_of(read_resource(client, "files://notes/today.md"))["contents"]

    assert item["text"] == "# Today\n"
