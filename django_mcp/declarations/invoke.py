"""Calling user code: ``def`` runs as is (ORM code stays plain), ``async def`` is awaited.

The MCP view is synchronous (it runs in a worker thread under ASGI), so coroutine functions
are run with ``async_to_sync``; the native ASGI path awaits them on its loop (:func:`acall`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync

from django_mcp.exceptions import RequestCancelled

if TYPE_CHECKING:
    from django_mcp.server.context import Context


def call(
    func: Callable[..., Any],
    /,
    *,
    _context: Context | None = None,
    _coroutine: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Call ``func`` with ``kwargs``, awaiting it if it is a coroutine function.

    With a ``_context``, cancelling the request cancels the coroutine's task.
    ``_coroutine`` says whether ``func`` is a coroutine function when the caller already
    knows (a declaration learns it at registration); None inspects ``func``.
    """
    if _coroutine is None:
        _coroutine = inspect.iscoroutinefunction(func)
    if not _coroutine:
        return func(**kwargs)
    if _context is None:
        return async_to_sync(func)(**kwargs)
    return async_to_sync(acall)(func, _context=_context, **kwargs)


async def acall(func: Callable[..., Any], /, *, _context: Context, **kwargs: Any) -> Any:
    """Await the coroutine function ``func`` in a task of its own, which cancelling the
    request cancels (:class:`~django_mcp.exceptions.RequestCancelled`). What :func:`call`
    runs through ``async_to_sync``, and what the native ASGI path awaits directly.

    Its own task, not the running one: on the native path the running task is the ASGI
    server's task for the whole HTTP request, and a cancellation aimed at the tool
    (``TOOL_TIMEOUT``, from a timer thread) must not hit it; it would stay marked
    cancelled, or, when the timer fires just as the tool returns, be cancelled while it
    sends the response. A finished task ignores a late cancel."""
    loop = asyncio.get_running_loop()
    task = loop.create_task(func(**kwargs))
    _context.on_cancel(lambda: _cancel_soon(loop, task))
    try:
        return await task
    except asyncio.CancelledError as exc:
        raise RequestCancelled() from exc


def accepted_kwargs(func: Callable[..., Any], available: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``available`` that ``func`` declares (or all of it, for ``**kwargs``)."""
    parameters = inspect.signature(func).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(available)
    return {name: value for name, value in available.items() if name in parameters}


def _cancel_soon(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` from any thread; nothing to do once its loop has closed (the handler
    finished while the client was leaving)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(task.cancel)
