"""Argument completion (server/utilities/completion.mdx) for prompts and resource templates.

A completer is a function (``def`` or ``async def``) that may accept any of ``value`` (what
the user typed so far), ``arguments`` (earlier resolved arguments, from
``context.arguments``), ``argument`` (the argument's name) and ``ctx``; it returns an
iterable of strings, best first, or a ``QuerySet`` (of which only the first 101 rows are
fetched, and the rest counted in SQL). Arguments typed as ``Literal`` or an ``Enum``
complete by prefix without a completer.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal, get_args, get_origin

from django.db.models import QuerySet
from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from django_mcp.declarations import invoke
from django_mcp.exceptions import InvalidDeclaration

MAX_VALUES: Final = 100


def choices_of(annotation: Any) -> list[str]:
    """The values offered for a ``Literal[...]`` or ``Enum`` annotation (else none), as the
    strings a client sends back."""
    if get_origin(annotation) is Literal:
        return [str(choice) for choice in get_args(annotation)]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(member.value) for member in annotation]
    return []


def choices_completer(annotation: Any) -> Callable[..., list[str]] | None:
    """A prefix completer for ``Literal[...]`` and ``Enum`` annotations, else None."""
    choices = choices_of(annotation)
    if not choices:
        return None

    def complete(value: str) -> list[str]:
        return [choice for choice in choices if choice.startswith(value)]

    return complete


def completer_for(
    name: str, completers: Mapping[str, Callable[..., Any]], fields: Mapping[str, FieldInfo]
) -> Callable[..., Any] | None:
    """The declared completer of argument ``name``, or one derived from its type."""
    if name in completers:
        return completers[name]
    info = fields.get(name)
    return choices_completer(info.annotation) if info is not None else None


def run_completer(
    completer: Callable[..., Any] | None,
    *,
    argument: str,
    value: str,
    arguments: Mapping[str, str],
    context: Any,
) -> dict[str, Any]:
    """Call the completer and shape the ``completion`` object (at most 100 values)."""
    if completer is None:
        return {"values": [], "total": 0, "hasMore": False}
    available = {"value": value, "arguments": dict(arguments), "argument": argument, "ctx": context}
    result: Iterable[Any] = invoke.call(completer, **invoke.accepted_kwargs(completer, available))
    values, total = _first_values_and_total(result)
    return {
        "values": values[:MAX_VALUES],
        "total": total,
        "hasMore": total > MAX_VALUES,
    }


def _first_values_and_total(result: Iterable[Any]) -> tuple[list[str], int]:
    """The first ``MAX_VALUES + 1`` candidates as strings, and how many there are in all.

    Only what is sent is kept: a ``QuerySet`` over a large table is fetched with ``LIMIT
    101`` and, when there are more, counted with ``COUNT(*)`` (a completer asked for "a"
    on a table of a million titles would otherwise load them all to send 100); any other
    iterable is read to its end for the total, one item at a time, without keeping the
    rest."""
    if isinstance(result, QuerySet):
        head = [str(item) for item in result[: MAX_VALUES + 1]]
        # Rows deleted between the two queries must not make the total smaller than what
        # is sent (total may only exceed the values, server/utilities/completion.mdx).
        return head, (max(result.count(), len(head)) if len(head) > MAX_VALUES else len(head))
    items = iter(result)
    head = [str(item) for item in itertools.islice(items, MAX_VALUES + 1)]
    return head, len(head) + sum(1 for _ in items)


def check_choices(registrant: str, name: str, annotation: Any) -> None:
    """Refuse a ``Literal``/``Enum`` parameter whose choices, sent back as the strings
    completion offers, would not validate: prompt arguments and URI template variables
    are strings on the wire, so ``Literal[1, 2]`` or ``Literal[True, False]`` could never
    be called (or read)."""
    choices = choices_of(annotation)
    if not choices:
        return
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    for choice in choices:
        try:
            adapter.validate_python(choice)
        except ValidationError:
            raise InvalidDeclaration(
                f"{registrant}: {name!r} offers {choice!r}, which it would refuse: prompt "
                "arguments and URI variables are strings, so use Literal of strings (or an "
                "Enum of str or int values) and convert in the function"
            ) from None
