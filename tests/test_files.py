"""File-backed resources: directory_resource and field_file_contents.

server/resources.mdx, "Security Considerations": servers MUST validate all
resource URIs and prevent path traversal for file-style resources. Every refusal answers
exactly like a missing file: -32602 with ``data.uri`` naming the URI asked for. Each test
serves a fresh site (the ``mcp_site`` fixture) over a temporary directory.
"""

from __future__ import annotations

import base64
import gzip
import io
import os
import tracemalloc
from typing import TYPE_CHECKING, Any

import pytest
from django.core.files.storage import FileSystemStorage
from django.db.models.fields.files import FieldFile, FileField
from django.urls import path

from django_mcp.declarations.files import (
    directory_resource,
    field_file_contents,
    read_bounded,
    safe_path,
)
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol import errors
from django_mcp.sites import MCPSite
from docs.examples import resources_example
from tests.helpers import assert_error, mcp_post, override_mcp, read_resource, result_of

if TYPE_CHECKING:
    from pathlib import Path

    from django.test import Client

urlpatterns = [path("example/mcp", resources_example.site.urls)]


pytestmark = pytest.mark.usefixtures("no_request_log")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ with text, binary and nested files; a secret beside root; symlinks."""
    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    (root / "readme.txt").write_text("hello", encoding="utf-8")
    (root / "notes" / "today.md").write_text("# Today\n", encoding="utf-8")
    (root / "data.bin").write_bytes(b"\x00\xffdata")
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    (root / "with space.txt").write_text("spaced", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "key.txt").write_text("KEY", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "leak.txt")
    os.symlink(tmp_path / "outside", root / "door")
    os.symlink(root / "readme.txt", root / "alias.txt")
    return root


@pytest.fixture
def files(mcp_site: MCPSite, tree: Path) -> MCPSite:
    directory_resource(mcp_site, "files://{+path}", tree)
    return mcp_site


def test_a_file_below_the_root_is_served_as_text(client: Client, files: MCPSite) -> None:
    """server/resources.mdx, "Text Content": a text item has uri, mimeType
    and text; the MIME type is guessed from the file name."""
    (item,) = result_of(read_resource(client, "files://notes/today.md"))["contents"]

    assert item == {
        "uri": "files://notes/today.md",
        "mimeType": "text/markdown",
        "text": "# Today\n",
    }


def test_binary_and_undecodable_files_are_blobs(client: Client, files: MCPSite) -> None:
    """server/resources.mdx, "Binary Content": binary data is a base64 blob;
    text that is not UTF-8 is served as bytes rather than garbled."""
    (binary,) = result_of(read_resource(client, "files://data.bin"))["contents"]
    (latin,) = result_of(read_resource(client, "files://latin1.txt"))["contents"]

    assert binary == {
        "uri": "files://data.bin",
        "mimeType": "application/octet-stream",
        "blob": base64.b64encode(b"\x00\xffdata").decode(),
    }
    assert base64.b64decode(latin["blob"]) == "café".encode("latin-1")
    assert latin["mimeType"] == "text/plain"


@pytest.mark.parametrize(
    ("name", "mime_type"),
    [
        ("notes.txt.gz", "application/gzip"),
        ("backup.tar.gz", "application/gzip"),
        ("dump.sql.bz2", "application/x-bzip2"),
        ("log.xz", "application/x-xz"),
    ],
)
def test_a_compressed_file_has_the_type_of_its_compression(
    client: Client, files: MCPSite, tree: Path, name: str, mime_type: str
) -> None:
    """server/resources.mdx, "Binary Content": mimeType is the blob's type, and the bytes
    of notes.txt.gz are gzip, not text/plain (mimetypes reports it as an encoding)."""
    data = gzip.compress(b"hello")
    (tree / name).write_bytes(data)

    (item,) = result_of(read_resource(client, f"files://{name}"))["contents"]

    assert item == {
        "uri": f"files://{name}",
        "mimeType": mime_type,
        "blob": base64.b64encode(data).decode(),
    }


def test_percent_encoded_names_are_decoded(client: Client, files: MCPSite) -> None:
    """server/resources.mdx, "Resource Templates": URI template variables are
    percent-decoded (RFC 6570); the contents name the URI that was read."""
    (item,) = result_of(read_resource(client, "files://with%20space.txt"))["contents"]

    assert item == {"uri": "files://with%20space.txt", "mimeType": "text/plain", "text": "spaced"}


def test_a_symlink_that_stays_inside_the_root_is_followed(client: Client, files: MCPSite) -> None:
    """server/resources.mdx, "Security Considerations": only links that leave the root
    are refused."""
    (item,) = result_of(read_resource(client, "files://alias.txt"))["contents"]

    assert item["text"] == "hello"


REFUSED = [
    "files://../secret.txt",  # dot-dot
    "files://notes/../../secret.txt",  # dot-dot after a real directory
    "files://%2e%2e/secret.txt",  # percent-encoded dot-dot
    "files://..%2Fsecret.txt",  # percent-encoded slash
    "files:///etc/passwd",  # absolute path
    "files://%2Fetc%2Fpasswd",  # percent-encoded absolute path
    "files://leak.txt",  # symlink to a file outside
    "files://door/key.txt",  # symlinked directory leading outside
    "files://readme.txt%00.png",  # NUL byte
    "files://notes",  # a directory, not a file
    "files://notes/",  # the same, with a slash
    "files://missing.txt",  # nothing there
    "files://C:/Windows/win.ini",  # drive-letter style
]


@pytest.mark.parametrize("uri", REFUSED)
def test_paths_out_of_the_root_answer_like_missing_files(
    client: Client, files: MCPSite, uri: str
) -> None:
    """server/resources.mdx, "Security Considerations": validate every URI
    and prevent path traversal; a refusal is -32602 with data.uri, like not found."""
    error = assert_error(read_resource(client, uri), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}
    assert "SECRET" not in str(error)
    assert "KEY" not in str(error)


def test_the_directory_is_listed_as_a_template(client: Client, files: MCPSite) -> None:
    """server/resources.mdx, "Resource Templates": a directory of files is a
    template, with the {+path} variable keeping slashes."""
    result = result_of(mcp_post(client, "resources/templates/list"))

    assert result["resourceTemplates"] == [
        {"uriTemplate": "files://{+path}", "name": "files", "description": "Files under root/"}
    ]


def test_a_simple_path_variable_serves_only_the_top_level(
    client: Client, mcp_site: MCPSite, tree: Path
) -> None:
    """server/resources.mdx, "Resource Templates": with {path} (simple expansion) a slash
    is not part of a value, so sub-directories are not reachable."""
    directory_resource(mcp_site, "flat://{path}", tree, name="flat")

    assert result_of(read_resource(client, "flat://readme.txt"))["contents"][0]["text"] == "hello"
    assert_error(read_resource(client, "flat://notes/today.md"), 200, errors.INVALID_PARAMS)


@pytest.mark.parametrize("uri", ["flat://notes%2Ftoday.md", "flat://notes%2ftoday.md"])
def test_a_simple_path_variable_does_not_reach_subdirectories_through_2f(
    client: Client, mcp_site: MCPSite, tree: Path, uri: str
) -> None:
    """server/resources.mdx, "Resource Templates" and "Security Considerations": with
    {path} a slash is not part of a value, and an encoded one (%2F, decoded after matching)
    does not make it one: it answers like a missing file."""
    directory_resource(mcp_site, "flat://{path}", tree, name="flat")

    response = read_resource(client, uri)

    error = assert_error(response, 200, errors.INVALID_PARAMS)
    assert error["data"] == {"uri": uri}


def test_a_template_without_a_path_variable_is_refused(tree: Path) -> None:
    """server/resources.mdx, "Resource Templates": the template must name the file."""
    with pytest.raises(InvalidDeclaration):
        directory_resource(MCPSite(name="bad"), "files://{name}", tree)


def test_safe_path_refuses_what_leaves_the_root(tree: Path) -> None:
    """server/resources.mdx, "Security Considerations": the check itself, below HTTP."""
    assert safe_path(tree, "readme.txt") == (tree / "readme.txt").resolve()
    for relative in [
        "",
        "../secret.txt",
        "/etc/passwd",
        "leak.txt",
        "door/key.txt",
        "notes",
        "a\x00b",
    ]:
        assert safe_path(tree, relative) is None, relative


@pytest.mark.urls(__name__)
def test_the_guides_shelf_serves_its_files(client: Client) -> None:
    """server/resources.mdx, "Reading Resources": the resources guide's directory."""
    response = read_resource(client, "shelf://policies/returns.txt", path="/example/mcp")
    (item,) = result_of(response)["contents"]

    assert item == {
        "uri": "shelf://policies/returns.txt",
        "mimeType": "text/plain",
        "text": "Books may be returned within 30 days.\n",
    }
    assert_error(
        read_resource(client, "shelf://../prompts_example.py", path="/example/mcp"), 200, -32602
    )


# -- FileField values --------------------------------------------------------------------------


def field_file(storage_root: Path, name: str) -> FieldFile:
    field = FileField(storage=FileSystemStorage(location=storage_root))
    return FieldFile(None, field, name)


def test_a_field_file_is_read_through_its_storage(tree: Path) -> None:
    """server/resources.mdx, "Text Content" and "Binary Content": a FileField's file is
    text or blob by its type."""
    text = field_file_contents(field_file(tree, "readme.txt"), "uploads://1")
    blob = field_file_contents(field_file(tree, "data.bin"), "uploads://2")

    assert text.to_dict() == {"uri": "uploads://1", "mimeType": "text/plain", "text": "hello"}
    assert blob.to_dict()["blob"] == base64.b64encode(b"\x00\xffdata").decode()


@pytest.mark.parametrize("name", ["", "missing.txt", "../secret.txt", "notes", "readme.txt/inside"])
def test_an_empty_missing_or_escaping_field_file_is_not_found(
    client: Client, mcp_site: MCPSite, tree: Path, name: str
) -> None:
    """server/resources.mdx, "Error Handling" and "Security Considerations": an empty
    FileField, a file missing from storage, a name the storage refuses, or one that is a
    directory (or goes through a file) is -32602 with data.uri, like any resource that is
    not there, and never -32603."""

    @mcp_site.resource("uploads://{key}")
    def upload(key: str) -> Any:
        return field_file_contents(field_file(tree, name), f"uploads://{key}")

    error = assert_error(read_resource(client, "uploads://1"), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": "uploads://1"}


# -- size limit --------------------------------------------------------------------------------


def test_a_huge_file_is_refused_without_being_read(
    client: Client, mcp_site: MCPSite, tmp_path: Path
) -> None:
    """server/resources.mdx, "Security Considerations", and docs/guides/hardening.md: a file
    over RESOURCE_FILE_MAX_BYTES (10 MiB by default) is refused by its size with -32602
    (data.uri and data.maxBytes) before it is read, so it costs the worker no memory."""
    root = tmp_path / "root"
    root.mkdir()
    size = 32 * 1024 * 1024
    with open(root / "dump.bin", "wb") as handle:  # sparse: no disk used
        handle.truncate(size)
    directory_resource(mcp_site, "files://{+path}", root)

    tracemalloc.start()
    try:
        response = read_resource(client, "files://dump.bin")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    error = assert_error(response, 200, errors.INVALID_PARAMS)
    assert error["data"] == {"uri": "files://dump.bin", "maxBytes": 10 * 1024 * 1024}
    assert peak < 1024 * 1024, peak


def test_a_file_at_the_limit_is_served_and_one_byte_more_is_refused(
    client: Client, files: MCPSite, tree: Path
) -> None:
    """server/resources.mdx, "Security Considerations": the limit is inclusive."""
    with override_mcp(RESOURCE_FILE_MAX_BYTES=5):
        served = read_resource(client, "files://readme.txt")  # 5 bytes
        refused = read_resource(client, "files://data.bin")  # 6 bytes

    assert result_of(served)["contents"][0]["text"] == "hello"
    error = assert_error(refused, 200, errors.INVALID_PARAMS)
    assert error["data"] == {"uri": "files://data.bin", "maxBytes": 5}


def test_a_file_whose_size_is_unknown_is_read_no_further_than_the_limit() -> None:
    """server/resources.mdx, "Security Considerations": when the storage cannot tell the
    size (or the file grew after it was measured) the read stops at the limit plus one."""
    stream = io.BytesIO(b"x" * 100)

    with override_mcp(RESOURCE_FILE_MAX_BYTES=10), pytest.raises(errors.ResourceTooLarge):
        read_bounded(stream, "files://grown", None)

    assert stream.tell() == 11
    with override_mcp(RESOURCE_FILE_MAX_BYTES=10):
        assert read_bounded(io.BytesIO(b"x" * 10), "files://ok", 3) == b"x" * 10


def test_a_field_file_over_the_limit_is_refused(tree: Path) -> None:
    """server/resources.mdx, "Security Considerations": a FileField's file is bounded too,
    by the size its storage reports."""
    with override_mcp(RESOURCE_FILE_MAX_BYTES=4), pytest.raises(errors.ResourceTooLarge):
        field_file_contents(field_file(tree, "readme.txt"), "uploads://1")


def test_an_unreadable_field_file_is_not_found(
    client: Client, mcp_site: MCPSite, tree: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """server/resources.mdx, "Error Handling": a stored file the server may not read
    (PermissionError) is not found (-32602), not an internal error."""

    def refuse(self: FileSystemStorage, name: str, mode: str = "rb") -> Any:
        raise PermissionError(13, "Permission denied", name)

    monkeypatch.setattr(FileSystemStorage, "_open", refuse)
    settings.DEBUG = False

    @mcp_site.resource("uploads://{key}")
    def upload(key: str) -> Any:
        return field_file_contents(field_file(tree, "readme.txt"), f"uploads://{key}")

    error = assert_error(read_resource(client, "uploads://1"), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": "uploads://1"}
