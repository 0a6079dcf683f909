"""Where a declaration comes from, for error messages a user can act on: the dotted name
of the function (or the ``ModelTools`` method) and the file and line that declared it."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any


def source_line(func: Callable[..., Any]) -> str | None:
    """``file.py:line`` of ``func``'s definition, when Python can tell."""
    target = inspect.unwrap(getattr(func, "__func__", func))
    try:
        filename = inspect.getsourcefile(target)
        _, line = inspect.getsourcelines(target)
    except (OSError, TypeError):
        return None
    if filename is None:
        return None
    path = Path(filename)
    try:
        shown = str(path.relative_to(Path.cwd()))
    except ValueError:
        shown = str(path)
    return f"{shown}:{line}"


def registrant(func: Callable[..., Any]) -> str:
    """A dotted name for error messages: ``module.qualname``."""
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"


def describe_origin(func: Callable[..., Any], name: str | None = None) -> str:
    """``module.qualname (file.py:line)``: which declaration, and where to find it."""
    where = source_line(func)
    dotted = name if name is not None else registrant(func)
    return f"{dotted} ({where})" if where else dotted
