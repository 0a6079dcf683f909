"""The references of a hand-written input schema, checked once, when the tool is declared.

``jsonschema`` resolves a ``$ref`` only when a call reaches it, so a schema whose
``$ref`` names nothing (``#/$defs/Nope``, a missing anchor, a relative or remote URI)
passed ``check_schema`` and then failed every call with -32603. Worse, its default
registry fetched an ``http(s)://`` reference over the network, in the request (a stall,
and a request to wherever the schema points). Here every reference is resolved against
the schema itself and the bundled metaschemas only (:func:`offline_registry`, which the
enforcing validator uses too): one that does not resolve, or that names no schema, is a
declaration error at the author's line. So is a cycle of references that never descends
into the arguments (``A: {$ref: B}, B: {$ref: A}``): evaluating it recurses for ever,
whatever the call sends. A recursive schema that descends (a tree whose ``children``
items refer back to the node) is fine: the JSON depth limit bounds its recursion.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from referencing import Registry, Resource
from referencing.exceptions import CannotDetermineSpecification, Unresolvable
from referencing.jsonschema import DRAFT202012

from django_mcp.exceptions import InvalidDeclaration

#: Keywords that apply their subschemas to the same instance (not to a part of it): a
#: cycle through them alone never ends.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MANY = ("allOf", "anyOf", "oneOf")
_REFS = ("$ref", "$dynamicRef")


def offline_registry() -> Registry[Any]:
    """The bundled metaschemas and nothing else: no reference is ever fetched."""
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped,unused-ignore]

    return REGISTRY.combine(Registry())  # type: ignore[no-any-return]


def check_references(schema: Mapping[str, Any], owner: str) -> None:
    """Raise :class:`InvalidDeclaration` for a reference that does not resolve offline,
    that names no schema, or that closes a cycle which never descends into the arguments."""
    try:
        root = DRAFT202012.create_resource(dict(schema))
        resolver = offline_registry().resolver_with_root(root)
        for contents, here in _subschemas(root, resolver):
            _check_cycles(contents, here, owner)
    except (Unresolvable, CannotDetermineSpecification) as exc:
        message = f"{owner}: input_schema has a $ref that does not resolve: {exc}"
        raise InvalidDeclaration(message) from exc


def _subschemas(resource: Resource[Any], resolver: Any) -> Iterator[tuple[Any, Any]]:
    """Every schema inside ``resource`` (itself included) with the resolver of its scope."""
    yield resource.contents, resolver
    for sub in resource.subresources():
        yield from _subschemas(sub, resolver.in_subresource(sub))


def _in_place(contents: Any, resolver: Any, owner: str) -> Iterator[tuple[Any, Any]]:
    """The schemas ``contents`` applies to its own instance, with their resolvers."""
    if not isinstance(contents, dict):
        return
    children: list[Any] = [contents[k] for k in _IN_PLACE_ONE if k in contents]
    for keyword in _IN_PLACE_MANY:
        if isinstance(contents.get(keyword), list):
            children.extend(contents[keyword])
    if isinstance(contents.get("dependentSchemas"), dict):
        children.extend(contents["dependentSchemas"].values())
    for child in children:
        sub = Resource.from_contents(child, default_specification=DRAFT202012)
        yield child, resolver.in_subresource(sub)
    for keyword in _REFS:
        if isinstance(contents.get(keyword), str):
            # $dynamicRef is followed statically: its target is where evaluation starts.
            resolved = resolver.lookup(contents[keyword])
            if not isinstance(resolved.contents, (dict, bool)):
                raise InvalidDeclaration(
                    f"{owner}: input_schema's {keyword} {contents[keyword]!r} names no schema"
                )
            yield resolved.contents, resolved.resolver


def _check_cycles(start: Any, resolver: Any, owner: str) -> None:
    """Follow in-place edges from ``start``; coming back to a schema on the path is a
    cycle that consumes nothing of the instance."""
    path: list[int] = []
    stack: list[tuple[Any, Iterator[tuple[Any, Any]]]] = []  # (schema, its children)
    done: set[int] = set()

    def enter(contents: Any, here: Any) -> None:
        path.append(id(contents))
        stack.append((contents, _in_place(contents, here, owner)))

    enter(start, resolver)
    while stack:
        _, children = stack[-1]
        for child, child_resolver in children:
            if id(child) in path:
                raise InvalidDeclaration(
                    f"{owner}: input_schema has a $ref cycle that never reaches into the "
                    "arguments: validating it would never end"
                )
            if id(child) not in done and isinstance(child, dict):
                enter(child, child_resolver)
                break
        else:
            stack.pop()
            done.add(path.pop())
