"""What a conforming 2026-07-28 client puts on the wire, built once for both test clients.

A request carries ``_meta`` (protocol version, client capabilities, client info) and, over
HTTP, headers that mirror the body: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``
and one ``Mcp-Param-{X}`` for each present argument whose schema has ``"x-mcp-header": "X"``
(basic/transports/streamable-http.mdx). A value that is not plain visible ASCII travels as
``=?base64?...?=``. Replies are one JSON body or an SSE stream whose last message is the
response; :func:`sse_messages` reads a complete stream.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final

from django_mcp.protocol.meta import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    PROTOCOL_VERSION_KEY,
)
from django_mcp.protocol.methods import NAME_FIELDS

PROTOCOL_VERSION: Final = "2026-07-28"
ACCEPT: Final = "application/json, text/event-stream"
#: What the test clients declare unless told otherwise: they can answer form and URL
#: elicitations (through ``answer=``), the one input kind that is not deprecated.
DEFAULT_CAPABILITIES: Final[Mapping[str, Any]] = {"elicitation": {"form": {}, "url": {}}}
DEFAULT_CLIENT_INFO: Final[Mapping[str, Any]] = {"name": "django-mcp-test", "version": "1.0"}
_SENTINEL_PREFIX: Final = "=?base64?"
_SENTINEL_SUFFIX: Final = "?="


def request_meta(
    version: str,
    capabilities: Mapping[str, Any],
    client_info: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The request ``_meta`` every 2026-07-28 request carries, plus ``extra`` keys (a
    ``progressToken``, a ``logLevel``)."""
    meta: dict[str, Any] = {
        PROTOCOL_VERSION_KEY: version,
        CLIENT_CAPABILITIES_KEY: dict(capabilities),
        CLIENT_INFO_KEY: dict(client_info),
    }
    meta.update(extra or {})
    return meta


def header_value(value: Any) -> str:
    """A body value as header text: booleans ``true``/``false``, numbers in decimal, and
    anything that is not plain visible ASCII (or looks like the sentinel) base64-wrapped."""
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    plain = (
        text == text.strip(" \t")
        and all(0x20 <= ord(ch) <= 0x7E for ch in text)
        and not (text.startswith(_SENTINEL_PREFIX) and text.endswith(_SENTINEL_SUFFIX))
    )
    if plain:
        return text
    return (
        _SENTINEL_PREFIX
        + base64.b64encode(text.encode("utf-8")).decode("ascii")
        + (_SENTINEL_SUFFIX)
    )


def header_params(tool: Mapping[str, Any]) -> dict[str, str]:
    """``{argument: header name}`` for the ``x-mcp-header`` arguments of a tool definition."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    found: dict[str, str] = {}
    for argument, definition in (properties or {}).items():
        if isinstance(definition, Mapping) and isinstance(definition.get("x-mcp-header"), str):
            found[argument] = definition["x-mcp-header"]
    return found


def mirrored_headers(
    message: Mapping[str, Any], params_headers: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The headers a conforming client sends with ``message``; ``params_headers`` maps
    argument names to their ``x-mcp-header`` names (``tools/call`` only)."""
    headers = {"Accept": ACCEPT}
    params = message.get("params") or {}
    version = (params.get("_meta") or {}).get(PROTOCOL_VERSION_KEY)
    if isinstance(version, str):
        headers["MCP-Protocol-Version"] = version
    method = message.get("method")
    if not isinstance(method, str):
        return headers
    headers["Mcp-Method"] = method
    field = NAME_FIELDS.get(method)
    if field is not None and isinstance(params.get(field), str):
        headers["Mcp-Name"] = header_value(params[field])
    arguments = params.get("arguments") or {}
    for argument, header in (params_headers or {}).items():
        value = arguments.get(argument)
        if value is not None:
            headers[f"Mcp-Param-{header}"] = header_value(value)
    return headers


def sse_lines_to_messages(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """JSON-RPC messages from SSE text lines: ``data:`` lines joined per event; comment,
    ``event:`` and other field lines skipped."""
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []
    if data:
        yield json.loads("\n".join(data))


def sse_messages(body: bytes) -> list[dict[str, Any]]:
    """Every JSON-RPC message of a complete SSE body."""
    return list(sse_lines_to_messages(body.decode("utf-8").splitlines()))


class SSEDecoder:
    """Messages from an SSE stream read in chunks of any size (an event may span chunks)."""

    def __init__(self) -> None:
        self._pending = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """The messages completed by ``chunk``."""
        self._pending += chunk.decode("utf-8")
        *lines, self._pending = self._pending.split("\n")
        found: list[dict[str, Any]] = []
        for raw in lines:
            line = raw.removesuffix("\r")
            if line.startswith("data:"):
                self._data.append(line[5:].removeprefix(" "))
            elif line == "" and self._data:
                found.append(json.loads("\n".join(self._data)))
                self._data = []
        return found
