"""Which tool arguments travel as ``Mcp-Param-{Name}`` headers, read from the published
``inputSchema`` (basic/transports/streamable-http.mdx, "Custom Headers from Tool
Parameters").

The schema a client reads is the only place a client learns of ``x-mcp-header``, so it is
also the only place the server takes them from: a hand-written ``input_schema``, a pydantic
field's ``json_schema_extra`` and ``MCPHeader`` are checked alike. A marker the server
could not check, or a client could not send, is refused when the tool is declared
(:class:`InvalidHeaderSchema`), never published unchecked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final, cast

from .headers import TOKEN, HeaderParam, HeaderType

MARKER: Final = "x-mcp-header"
_TYPES: Final = frozenset({"string", "integer", "boolean"})
#: Keywords whose value maps property names (not keywords) to schemas.
_NAME_MAPS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions"})
#: Keywords whose value is data, not a schema: a marker there marks nothing.
_DATA: Final = frozenset({"default", "const", "enum", "examples"})


class InvalidHeaderSchema(ValueError):
    """An ``x-mcp-header`` marker no client could follow or no server could check."""


def header_params(schema: Mapping[str, Any]) -> dict[str, HeaderParam]:
    """``{argument: HeaderParam}`` for every top-level property marked ``x-mcp-header``.

    Raises :class:`InvalidHeaderSchema` for a marker that is:

    - anywhere but on a top-level property (nested, under ``$defs``, ``items`` or a
      combinator). The page allows a chain of ``properties``; SEP-2243's table refuses
      nested ones, and a server that checks only what it can find would let the rest
      through unchecked;
    - not an RFC 9110 token, or one holding ``_``: gunicorn and Django's ASGI handler drop
      a header whose name holds ``_``, so no client could send it;
    - on a property that is not a string, integer or boolean;
    - used twice, compared case-insensitively.
    """
    properties = schema.get("properties")
    top = properties if isinstance(properties, Mapping) else {}
    found: dict[str, HeaderParam] = {}
    seen: dict[str, str] = {}
    for argument, prop in top.items():
        if not isinstance(prop, Mapping) or MARKER not in prop:
            continue
        header = _header_name(argument, prop[MARKER])
        if header.lower() in seen:
            raise InvalidHeaderSchema(
                f"x-mcp-header {header!r} is used by both {seen[header.lower()]!r} and {argument!r}"
            )
        seen[header.lower()] = argument
        found[argument] = HeaderParam(argument, header, _header_type(argument, prop, schema))
    marked = {id(prop) for prop in top.values()}
    for where, node in _nodes(schema, "inputSchema"):
        if MARKER in node and id(node) not in marked:
            raise InvalidHeaderSchema(
                f"x-mcp-header at {where} is not on a top-level property: only arguments "
                "at the top of the input schema can be sent as headers"
            )
    return found


def _header_name(argument: str, header: Any) -> str:
    if not isinstance(header, str) or not TOKEN.match(header):
        raise InvalidHeaderSchema(
            f"x-mcp-header {header!r} of {argument!r} is not an RFC 9110 token"
        )
    if "_" in header:
        raise InvalidHeaderSchema(
            f"x-mcp-header {header!r} of {argument!r} holds '_': servers such as gunicorn "
            "and Django's ASGI handler drop a header whose name holds '_', so no client "
            "could send it. Use '-' instead."
        )
    return header


def _header_type(argument: str, prop: Mapping[str, Any], root: Mapping[str, Any]) -> HeaderType:
    """The one JSON type of the property (``null`` aside, for an optional argument),
    following a local ``$ref`` into ``$defs`` for its type: pydantic describes an ``Enum``
    argument as ``{"$ref": "#/$defs/Region", "x-mcp-header": ...}``."""
    kinds: set[str] = set()
    for option in (prop, *prop.get("anyOf", prop.get("oneOf", ()))):
        if isinstance(option, Mapping):
            kinds |= _types(option.get("type")) | _types(_defined(option, root).get("type"))
    kinds.discard("null")
    if len(kinds) == 1 and kinds <= _TYPES:
        return cast(HeaderType, kinds.pop())
    raise InvalidHeaderSchema(
        f"x-mcp-header argument {argument!r} must be a string, integer or boolean"
    )


def _defined(option: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """What a local ``{"$ref": "#/$defs/<name>"}`` names (empty for anything else)."""
    ref = option.get("$ref")
    definitions = root.get("$defs")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return {}
    if not isinstance(definitions, Mapping):
        return {}
    found = definitions.get(ref.removeprefix("#/$defs/"))
    return found if isinstance(found, Mapping) else {}


def _types(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {item for item in value if isinstance(item, str)}
    return set()


def _nodes(value: Any, where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every schema object in ``value`` with its path; the keys of a name map (``properties``
    and the like) are names, not keywords, so a property called ``x-mcp-header`` is no
    marker."""
    stack: list[tuple[Any, str, bool]] = [(value, where, False)]
    while stack:
        item, path, names = stack.pop()
        if isinstance(item, Mapping):
            if not names:
                yield path, item
            for key, member in item.items():
                if not names and key in _DATA:
                    continue
                child_names = not names and key in _NAME_MAPS
                stack.append((member, f"{path}.{key}", child_names))
        elif isinstance(item, list):
            stack.extend((member, f"{path}[{i}]", False) for i, member in enumerate(item))
