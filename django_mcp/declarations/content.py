"""Content a tool or prompt may return, and its conversion to MCP content blocks.

Return a ``str`` for text, one of these classes for other kinds, or a list mixing them.
Anything else is structured output: it becomes ``structuredContent`` plus its JSON text.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal

Audience = Literal["user", "assistant"]
#: Binary data as a block takes it: bytes-like (base64-encoded when sent) or base64 text.
Binary = bytes | bytearray | memoryview | str


@dataclass(frozen=True)
class Annotations:
    """Hints for the client about a content block (audience, priority 0..1, lastModified)."""

    audience: list[Audience] | None = None
    priority: float | None = None
    last_modified: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.audience is not None:
            data["audience"] = list(self.audience)
        if self.priority is not None:
            data["priority"] = self.priority
        if self.last_modified is not None:
            data["lastModified"] = self.last_modified
        return data


def annotations_problem(annotations: Any) -> str | None:
    """Why ``annotations`` would break the schema's ``Annotations``, or None if it is fine:
    audience only "user"/"assistant", priority a number in [0, 1], lastModified a string."""
    if not isinstance(annotations, Annotations):
        return f"annotations must be an Annotations, not {annotations!r}"
    audience, priority = annotations.audience, annotations.priority
    if audience is not None and (
        not isinstance(audience, (list, tuple))
        or any(role not in ("user", "assistant") for role in audience)
    ):
        return f'annotations audience must list only "user" and "assistant", not {audience!r}'
    if priority is not None and (
        isinstance(priority, bool)
        or not isinstance(priority, (int, float))
        or not 0 <= priority <= 1
    ):
        return f"annotations priority must be a number from 0 to 1, not {priority!r}"
    if annotations.last_modified is not None and not isinstance(annotations.last_modified, str):
        return "annotations last_modified must be an ISO 8601 string"
    return None


@dataclass(frozen=True)
class _Block:
    annotations: Annotations | None = field(default=None, kw_only=True)
    meta: dict[str, Any] | None = field(default=None, kw_only=True)

    def _finish(self, block: dict[str, Any]) -> dict[str, Any]:
        if self.annotations is not None:
            block["annotations"] = self.annotations.to_dict()
        if self.meta is not None:
            block["_meta"] = dict(self.meta)
        return block

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class Text(_Block):
    """A text content block."""

    text: str

    def __post_init__(self) -> None:
        # The schema's TextContent.text is a string; nothing checks the block again later.
        if not isinstance(self.text, str):
            raise TypeError(f"Text content holds a str, not {type(self.text).__name__}")

    def to_dict(self) -> dict[str, Any]:
        return self._finish({"type": "text", "text": self.text})


def _b64(data: Binary) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def _require(block: object, **kinds: tuple[type, ...]) -> None:
    """Raise ``TypeError`` unless each named attribute of ``block`` is of one of its
    ``kinds`` (``type(None)`` among them for an optional one). The schema says what
    each field holds, and nothing checks a block again before it is sent, so a wrong
    value is refused where it is built, named, rather than sent for a client to refuse."""
    for name, allowed in kinds.items():
        value = getattr(block, name)
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise TypeError(
                f"{type(block).__name__}.{name} may not be {type(value).__name__}: "
                f"it holds {' or '.join(kind.__name__ for kind in allowed)}"
            )


_BINARY: tuple[type, ...] = (bytes, bytearray, memoryview, str)
_MEDIA: dict[str, tuple[type, ...]] = {"data": _BINARY, "mime_type": (str,)}
_NONE = type(None)


@dataclass(frozen=True)
class Image(_Block):
    """An image: raw bytes (or base64 text) and its MIME type."""

    data: Binary
    mime_type: str = "image/png"

    def __post_init__(self) -> None:
        _require(self, **_MEDIA)

    def to_dict(self) -> dict[str, Any]:
        return self._finish({"type": "image", "data": _b64(self.data), "mimeType": self.mime_type})


@dataclass(frozen=True)
class Audio(_Block):
    """Audio: raw bytes (or base64 text) and its MIME type."""

    data: Binary
    mime_type: str = "audio/wav"

    def __post_init__(self) -> None:
        _require(self, **_MEDIA)

    def to_dict(self) -> dict[str, Any]:
        return self._finish({"type": "audio", "data": _b64(self.data), "mimeType": self.mime_type})


@dataclass(frozen=True)
class ResourceLink(_Block):
    """A link to a resource the client may read; it need not be listed."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        optional = (str, _NONE)
        _require(self, uri=(str,), name=(str,), title=optional, description=optional)
        _require(self, mime_type=optional, size=(int, _NONE))

    def to_dict(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("size", self.size),
        ):
            if value is not None:
                block[key] = value
        return self._finish(block)


@dataclass(frozen=True)
class ResourceContents:
    """The contents of a resource: ``text`` or ``blob`` (bytes), with URI and MIME type."""

    uri: str
    text: str | None = None
    blob: Binary | None = None
    mime_type: str | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("ResourceContents needs exactly one of text or blob")
        _require(self, uri=(str,), text=(str, _NONE), blob=(*_BINARY, _NONE))
        _require(self, mime_type=(str, _NONE))

    def to_dict(self) -> dict[str, Any]:
        item: dict[str, Any] = {"uri": self.uri}
        if self.mime_type is not None:
            item["mimeType"] = self.mime_type
        if self.text is not None:
            item["text"] = self.text
        else:
            assert self.blob is not None
            item["blob"] = _b64(self.blob)
        if self.meta is not None:
            item["_meta"] = dict(self.meta)
        return item


@dataclass(frozen=True)
class EmbeddedResource(_Block):
    """A resource's contents embedded in the result."""

    resource: ResourceContents

    def __post_init__(self) -> None:
        _require(self, resource=(ResourceContents,))

    def to_dict(self) -> dict[str, Any]:
        return self._finish({"type": "resource", "resource": self.resource.to_dict()})


ContentBlock = Text | Image | Audio | ResourceLink | EmbeddedResource
CONTENT_TYPES = (Text, Image, Audio, ResourceLink, EmbeddedResource)


def is_content(value: Any) -> bool:
    """Whether ``value`` is content (a string, a block, or a non-empty list of them)."""
    if isinstance(value, str | _Block):
        return True
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(item, str | _Block) for item in value)
    )


def to_blocks(value: Any) -> list[dict[str, Any]]:
    """Convert content (see :func:`is_content`) to a list of content-block dicts."""
    items = value if isinstance(value, list | tuple) else [value]
    return [Text(item).to_dict() if isinstance(item, str) else item.to_dict() for item in items]


@dataclass(frozen=True)
class ToolResult:
    """Full control over a ``CallToolResult``: content, structured output and isError."""

    content: list[ContentBlock | str] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"content": to_blocks(self.content) if self.content else []}
        if self.structured is not None:
            result["structuredContent"] = self.structured
        if self.is_error:
            result["isError"] = True
        if self.meta is not None:
            result["_meta"] = dict(self.meta)
        return result
