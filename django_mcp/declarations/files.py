"""File-backed resources that cannot escape their directory.

``directory_resource(site, "docs://{+path}", root)`` serves every regular file below
``root``; :func:`field_file_contents` turns a ``FileField`` value into resource contents.
Paths are resolved (following symlinks) and must stay inside the resolved root, so
``../`` sequences, absolute paths, NUL bytes and symlinks pointing outside are all
refused as "not found" (server/resources.mdx, "Security Considerations": servers MUST
validate all resource URIs). The resolved path is then opened component by component
below the root's descriptor without following symlinks (:func:`open_below`), so a symlink
swapped in after the check cannot lead out of the root; a symlink that stays inside is
served because the check resolved it. A file that is gone, unreadable or no longer a
regular file when it is opened is not found too. A file over ``RESOURCE_FILE_MAX_BYTES``
is refused with :class:`ResourceTooLarge` before it is read, and never more than the limit
plus one byte is read, so one large file cannot exhaust a worker's memory.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote

from django.core.exceptions import SuspiciousFileOperation

from django_mcp.conf import mcp_settings
from django_mcp.declarations.content import ResourceContents
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol.errors import ResourceNotFound, ResourceTooLarge

if TYPE_CHECKING:
    from django.db.models.fields.files import FieldFile

    from django_mcp.sites import MCPSite

TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/yaml")
#: The type of a compressed file (``mimetypes.guess_type``'s encoding): ``notes.txt.gz`` is
#: gzip bytes, not text/plain.
ENCODING_TYPES = {
    "gzip": "application/gzip",
    "bzip2": "application/x-bzip2",
    "xz": "application/x-xz",
    "compress": "application/x-compress",
    "br": "application/x-brotli",
}


def safe_path(root: Path, relative: str) -> Path | None:
    """``root / relative`` if it names a regular file inside ``root``, else None."""
    if not relative or "\x00" in relative or relative.startswith(("/", "\\")) or ":" in relative:
        return None
    base = root.resolve()
    try:
        candidate = (base / relative).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not candidate.is_relative_to(base) or not candidate.is_file():
        return None
    return candidate


def read_bounded(handle: IO[bytes], uri: str, size: int | None) -> bytes:
    """Read ``handle`` whole, refusing with :class:`ResourceTooLarge` a file over
    ``RESOURCE_FILE_MAX_BYTES``: first by its ``size`` (when known), then by reading no
    more than the limit plus one byte (a file that grew, or a size the storage does not
    know)."""
    limit: int = mcp_settings.RESOURCE_FILE_MAX_BYTES
    if size is not None and size > limit:
        raise ResourceTooLarge(uri, limit)
    data = handle.read(limit + 1)
    if len(data) > limit:
        raise ResourceTooLarge(uri, limit)
    return data


def open_below(base: Path, target: Path) -> int:
    """A read-only descriptor of ``target``, a path below the directory ``base``, opened one
    component at a time relative to the descriptor of the one before (``dir_fd``), none of
    them followed if it is a symlink (``O_NOFOLLOW``). A symlink put in place of any
    component after the path was checked (a race) fails the open instead of leading out
    of ``base``; so does a ``..``. Raises ``OSError`` or ``ValueError``."""
    parts = target.relative_to(base).parts
    if not parts or any(part in ("", ".", "..") or os.sep in part for part in parts):
        raise ValueError(f"{target} is not a path below {base}")
    if os.open not in os.supports_dir_fd:  # Windows: no dir_fd, the check alone guards
        return os.open(target, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    nofollow = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            inner = os.open(part, nofollow | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        # Non-blocking: a FIFO swapped in would otherwise hold the worker until a writer came.
        return os.open(parts[-1], nofollow | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def opened_contents(
    fd: int, filename: str, uri: str, mime_type: str | None = None
) -> ResourceContents:
    """Contents of the open file ``fd`` (closed here), which must be a regular file."""
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode):  # a directory, FIFO or device by now
        os.close(fd)
        raise ResourceNotFound(uri)
    with os.fdopen(fd, "rb") as handle:
        data = read_bounded(handle, uri, status.st_size)
    return bytes_contents(data, filename, uri, mime_type)


def bytes_contents(
    data: bytes, filename: str, uri: str, mime_type: str | None = None
) -> ResourceContents:
    """``data`` as resource contents: text when its MIME type (given, or guessed from
    ``filename``) is textual and it decodes as UTF-8, a blob otherwise."""
    guessed = mime_type or guess_type(filename)
    if guessed.startswith("text/") or guessed in TEXT_TYPES:
        try:
            return ResourceContents(uri, text=data.decode("utf-8"), mime_type=guessed)
        except UnicodeDecodeError:
            pass
    return ResourceContents(uri, blob=data, mime_type=guessed)


def guess_type(filename: str) -> str:
    """The MIME type of ``filename``: its compression's when it is compressed."""
    content_type, encoding = mimetypes.guess_type(filename)
    if encoding is not None:
        return ENCODING_TYPES.get(encoding, "application/octet-stream")
    return content_type or "application/octet-stream"


def directory_resource(
    site: MCPSite,
    uri_template: str,
    root: str | os.PathLike[str],
    *,
    name: str = "files",
    description: str | None = None,
    **options: Any,
) -> None:
    """Register a template resource serving files under ``root``.

    ``uri_template`` must have exactly one variable, ``path``, usually reserved expansion
    (``docs://{+path}``) so that sub-directories work.
    """
    root_path = Path(root)
    if "{+path}" not in uri_template and "{path}" not in uri_template:
        raise InvalidDeclaration(f"{uri_template!r} must contain a {{+path}} variable")
    # Simple expansion: a slash is not part of a value, so a decoded one (``%2F``) must not
    # reach a sub-directory either.
    top_level_only = "{+path}" not in uri_template

    def expand(path: str) -> str:
        # Re-encode the decoded variable, so the contents name the URI that was read.
        return uri_template.replace("{+path}", quote(path, safe="/")).replace(
            "{path}", quote(path, safe="")
        )

    def read_file(path: str) -> ResourceContents:
        uri = expand(path)
        found = None
        if not (top_level_only and ("/" in path or "\\" in path)):
            found = safe_path(root_path, path)
        if found is None:
            raise ResourceNotFound(uri)
        try:
            # The checked path is resolved: it has no symlink left to follow, so one found
            # when it is opened was put there since, and is refused.
            fd = open_below(root_path.resolve(), found)
        except (OSError, ValueError) as exc:  # gone, unreadable, a symlink or ".." by now
            raise ResourceNotFound(uri) from exc
        return opened_contents(fd, found.name, uri)

    read_file.__qualname__ = f"directory_resource[{root_path}]"
    site.resource(
        uri_template,
        name=name,
        description=description or f"Files under {root_path.name}/",
        **options,
    )(read_file)


def field_file_contents(
    field_file: FieldFile, uri: str, mime_type: str | None = None
) -> ResourceContents:
    """The contents of a ``FileField``/``ImageField`` value, read through its storage (so a
    storage backend's own path rules apply)."""
    if not field_file:
        raise ResourceNotFound(uri)
    try:
        with field_file.open("rb") as handle:
            data = read_bounded(handle, uri, _stored_size(handle))
    except (
        FileNotFoundError,
        IsADirectoryError,
        NotADirectoryError,
        PermissionError,
        SuspiciousFileOperation,
    ) as exc:
        # Missing from storage, a directory, unreadable, or a name the storage refuses
        # (e.g. ``../``): not found, never an internal error.
        raise ResourceNotFound(uri) from exc
    return bytes_contents(data, field_file.name or "", uri, mime_type)


def _stored_size(handle: Any) -> int | None:
    """The size the storage reports for an open file, or None when it cannot say."""
    try:
        size = handle.size
    except (OSError, AttributeError, NotImplementedError, ValueError):
        return None
    return size if isinstance(size, int) else None
