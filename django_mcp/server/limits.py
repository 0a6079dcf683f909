"""Limits on one tool call: the size of its arguments and how long it may run.

Both are refused as *tool execution errors* (``isError: true``, server/tools.mdx, "Error
Handling"): the call was well-formed, and the model can react (send less, ask for less).

The time limit, ``TOOL_TIMEOUT`` seconds, works through the request's cancellation:

* an ``async def`` tool is cancelled at the limit (its task gets ``CancelledError``);
* a plain ``def`` tool cannot be stopped from outside its thread. At the limit the request
  is marked cancelled, so the tool's next ``ctx.check_cancelled()``, ``ctx.report_progress``
  or ``ctx.log`` raises and it stops there; it sends nothing more. If it never looks, it
  runs to its end, and the client then gets the timeout error, not the late result: the
  worker does not report a success that came after the limit. Side effects it made before
  stopping (rows written, mail sent) are not undone.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from django_mcp.conf import mcp_settings
from django_mcp.exceptions import RequestCancelled
from django_mcp.protocol import jsontext

if TYPE_CHECKING:
    from django_mcp.server.context import Context

#: Built once (see :mod:`django_mcp.protocol.jsontext`).
_COMPACT: Final = jsontext.encoder(ensure_ascii=False, separators=(",", ":"))


class LimitExceeded(Exception):
    """A tool call went over a limit; the message says which, for the model to read."""


def check_argument_size(name: str, arguments: Mapping[str, Any]) -> str | None:
    """Refuse arguments whose JSON is over ``MAX_TOOL_ARGUMENT_BYTES``, before validation.

    Gives the JSON text it measured when validation may read it in place of its own
    encoding of the same ``arguments`` (:meth:`ToolSpec.call_encoded
    <django_mcp.declarations.tools.ToolSpec.call_encoded>`), else None (no limit set).
    That holds when the text is ASCII and holds no ``NaN`` or ``Infinity``: then it
    differs from what validation writes (``ensure_ascii``, the default separators) only
    by the blanks after ``,`` and ``:``, which JSON ignores; any other character may be
    written differently (a lone surrogate raw here, escaped there), and a text a parser
    might refuse would be refused naming a column, which the blanks move.
    """
    limit = mcp_settings.MAX_TOOL_ARGUMENT_BYTES
    if limit is None:
        return None
    text = _COMPACT(arguments)
    ascii_only = text.isascii()
    size = len(text) if ascii_only else len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise LimitExceeded(
            f"The arguments of tool {name} are too large ({size} bytes; the limit is {limit})."
        )
    if ascii_only and "NaN" not in text and "Infinity" not in text:
        return text
    return None


def time_limit(name: str, context: Context) -> contextlib.AbstractContextManager[None]:
    """``TOOL_TIMEOUT`` around the block: at the limit the request is cancelled, and the
    block ends with :class:`LimitExceeded` (for a sync call and an awaited one alike).
    Without a limit, a context manager that does nothing (no generator to start)."""
    timeout = mcp_settings.TOOL_TIMEOUT
    if timeout is None:
        return _NO_LIMIT
    return _limited(name, context, timeout)


_NO_LIMIT: Final = contextlib.nullcontext()


@contextlib.contextmanager
def _limited(name: str, context: Context, timeout: float) -> Iterator[None]:
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        context.cancel()

    timer = threading.Timer(float(timeout), expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    except RequestCancelled:
        if expired.is_set():
            raise LimitExceeded(_timed_out(name, timeout)) from None
        raise
    finally:
        timer.cancel()
    if expired.is_set():
        raise LimitExceeded(_timed_out(name, timeout))


def _timed_out(name: str, timeout: float) -> str:
    return f"Tool {name} timed out after {timeout:g} seconds."
