"""The shape of a ``CreateMessageResult`` (schema.json; client/sampling.mdx), the answer a
client gives to a ``sampling/createMessage`` input request.

A handler reads the answer as plain JSON (``result["content"]["text"]``, ``stopReason``),
so every member the schema types is checked before it is handed over, nested blocks
included: a member of the wrong type would otherwise fail in the handler, as -32603, or
worse pass through it. Unknown members (``_meta``, ``annotations``, extensions) are left
alone, as the schema leaves them open.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

#: Each content block's ``type`` and its required members with their JSON types:
#: ``ContentBlock`` (what a tool result holds) and ``SamplingMessageContentBlock`` (what a
#: sampled message holds).
_CONTENT_BLOCKS: Final[dict[str, dict[str, type]]] = {
    "text": {"text": str},
    "image": {"data": str, "mimeType": str},
    "audio": {"data": str, "mimeType": str},
    "resource_link": {"uri": str, "name": str},
    "resource": {"resource": dict},
}
_SAMPLING_BLOCKS: Final[dict[str, dict[str, type]]] = {
    "text": {"text": str},
    "image": {"data": str, "mimeType": str},
    "audio": {"data": str, "mimeType": str},
    "tool_use": {"id": str, "name": str, "input": dict},
    "tool_result": {"toolUseId": str, "content": list},
}


def is_create_message_result(value: Any) -> bool:
    """A string ``model``, a ``role`` (``assistant`` or ``user``), ``content`` that is a
    sampling content block or a list of them, and ``stopReason``, if present, a string
    (an open one: "endTurn", "maxTokens" and the like, or a provider's own)."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("model"), str)
        and value.get("role") in ("assistant", "user")
        and isinstance(value.get("stopReason", ""), str)
        and _is_sampling_content(value.get("content"))
    )


def _is_sampling_content(content: Any) -> bool:
    """Whether ``content`` is one sampling content block or a list of them."""
    blocks = content if isinstance(content, list) else [content]
    return all(_is_sampling_block(block) for block in blocks)


def _is_sampling_block(block: Any) -> bool:
    """A sampling block with its members; a ``tool_result``'s ``content`` holds content
    blocks and its ``isError``, if present, is a boolean (``ToolResultContent``)."""
    if not _has_members(block, _SAMPLING_BLOCKS):
        return False
    if block["type"] != "tool_result":
        return True
    return isinstance(block.get("isError", False), bool) and all(
        map(_is_content_block, block["content"])
    )


def _is_content_block(block: Any) -> bool:
    """A ``ContentBlock``; an embedded resource's ``resource`` is a text or blob
    ``ResourceContents`` (a string ``uri`` and a string ``text`` or ``blob``)."""
    if not _has_members(block, _CONTENT_BLOCKS):
        return False
    if block["type"] != "resource":
        return True
    resource = block["resource"]
    return isinstance(resource.get("uri"), str) and (
        isinstance(resource.get("text"), str) or isinstance(resource.get("blob"), str)
    )


def _has_members(block: Any, kinds: Mapping[str, Mapping[str, type]]) -> bool:
    """An object of a ``type`` in ``kinds`` with its required members (``type`` may be any
    JSON value: an unhashable one is no key to look up)."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    members = kinds.get(kind) if isinstance(kind, str) else None
    return members is not None and all(
        isinstance(block.get(name), member) for name, member in members.items()
    )
