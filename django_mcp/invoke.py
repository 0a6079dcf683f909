"""Calling user code: ``def`` runs as is (ORM code stays plain), ``async def`` is awaited.

The MCP view is synchronous (it runs in a worker thread under ASGI), so coroutine functions
are run with ``async_to_sync``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync


def call(func: Callable[..., Any], /, **kwargs: Any) -> Any:
    """Call ``func`` with ``kwargs``, awaiting it if it is a coroutine function."""
    if inspect.iscoroutinefunction(func):
        return async_to_sync(func)(**kwargs)
    return func(**kwargs)


def accepted_kwargs(func: Callable[..., Any], available: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``available`` that ``func`` declares (or all of it, for ``**kwargs``)."""
    parameters = inspect.signature(func).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(available)
    return {name: value for name, value in available.items() if name in parameters}
