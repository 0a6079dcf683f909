"""Finding the first string (a value or an object's key) that matches a pattern, anywhere
in a parsed JSON value, and saying where it is.

Why a module: admission refuses unpaired surrogates in ``params`` (:mod:`.unpaired`) and
the task store refuses NUL (which PostgreSQL cannot keep in text or ``jsonb``); both must
name the place (``params.arguments.items[2]``) and walk values as deep as a message may
nest, without recursion (as :func:`.jsonrpc.depth`).
"""

from __future__ import annotations

import re
from typing import Any


def first_match(value: Any, path: str, pattern: re.Pattern[str]) -> str | None:
    """Where the first string in ``value`` that ``pattern`` finds something in is: its
    path from ``path`` (``path.key``, ``path[3]``), with `` (a key)`` when it is an
    object's key; None when there is none."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if pattern.search(item) is not None:
                return where
        elif isinstance(item, dict):
            for key, member in item.items():
                if isinstance(key, str) and pattern.search(key) is not None:
                    return f"{where} (a key)"
                stack.append((member, f"{where}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((member, f"{where}[{index}]") for index, member in enumerate(item))
    return None
