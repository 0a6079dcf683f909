"""Finding the first string (a value or an object's key) that matches a pattern, anywhere
in a parsed JSON value, and saying where it is.

Why a module: admission refuses unpaired surrogates in ``params`` (:mod:`.unpaired`) and
the task store refuses what PostgreSQL cannot keep (NUL, unpaired surrogates); both must
name the place (``params.arguments.items[2]``) and walk values as deep as a message may
nest, without recursion.

The walk costs one step per value and builds no path until it finds a match: each step
keeps a link to its parent (a key or an index), and only the match's path is spelt out,
shortened, since keys are the client's and may be megabytes long. A value of a million
items under a long key costs a million small tuples, not a million copies of the key.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeAlias

from .jsontext import encoder

#: The longest key or path segment written into a message (the rest is elided).
MAX_SEGMENT_CHARS: Final = 64
#: The longest path written into a message.
MAX_PATH_CHARS: Final = 256

#: JSON text with every character as itself: a lone surrogate stays one, NUL is ``\u0000``.
_AS_TEXT: Final = encoder(ensure_ascii=False)

#: A step's place: its parent's place and its own key or index (None for the root).
_Place: TypeAlias = "tuple[_Place, str | int] | None"


def may_hold(value: Any, *, nul: bool) -> bool:
    """Whether ``value`` may hold an unpaired surrogate (or, with ``nul``, a NUL) in a
    string or a key, checked in C before any walk: its JSON text with every character as
    itself, which UTF-8 encodes unless an unpaired surrogate is in it (the parser joins
    valid pairs), and in which a NUL is written ``\u0000``. False is certain; True means
    :func:`first_match` must look (also for a value nested too deep to encode)."""
    try:
        text = _AS_TEXT(value)
        text.encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        return True
    return nul and "\\u0000" in text


def first_match(value: Any, path: str, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """The first string in ``value`` in which ``pattern`` finds something: its path from
    ``path`` (``path.key``, ``path[3]``, with `` (a key)`` when it is an object's key) and
    the text found; None when there is none."""
    stack: list[tuple[Any, _Place]] = [(value, None)]
    while stack:
        item, place = stack.pop()
        if isinstance(item, str):
            found = pattern.search(item)
            if found is not None:
                return _spelt(path, place), found.group()
        elif isinstance(item, dict):
            for key, member in item.items():
                if isinstance(key, str):
                    found = pattern.search(key)
                    if found is not None:
                        return _spelt(path, place) + " (a key)", found.group()
                stack.append((member, (place, str(key))))
        elif isinstance(item, list | tuple):
            stack.extend((member, (place, index)) for index, member in enumerate(item))
    return None


def _spelt(path: str, place: _Place) -> str:
    segments: list[str] = []
    while place is not None:
        place, segment = place
        if isinstance(segment, int):
            segments.append(f"[{segment}]")
        elif len(segment) <= MAX_SEGMENT_CHARS:
            segments.append("." + segment)
        else:
            segments.append("." + segment[:MAX_SEGMENT_CHARS] + "...")
    spelt = path + "".join(reversed(segments))
    return spelt if len(spelt) <= MAX_PATH_CHARS else spelt[:MAX_PATH_CHARS] + "..."
