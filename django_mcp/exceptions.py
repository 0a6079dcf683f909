"""Exceptions user code raises, registry errors, and the replaceable exception handler."""

from __future__ import annotations

import logging
import traceback
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError

from django_mcp.protocol.errors import InternalError, MCPError

if TYPE_CHECKING:
    from django_mcp.server.context import Context

logger = logging.getLogger("django_mcp")


class ToolError(Exception):
    """Raise in a tool to return ``isError: true`` with this message, so the model can
    read what went wrong and correct itself (server/tools.mdx, "Error Handling")."""


class RequestCancelled(Exception):
    """Raised inside a handler (at ``ctx.report_progress`` or ``ctx.check_cancelled``) once
    the client has cancelled the request; nothing more is sent for it."""


class AlreadyRegistered(ImproperlyConfigured):
    """A declaration with the same name is already registered on the site."""


class NotRegistered(KeyError):
    """Unregistering a declaration the site does not have."""


class InvalidDeclaration(ImproperlyConfigured):
    """A tool, resource or prompt declaration that breaks a spec constraint."""


class MissingDependency(InvalidDeclaration):
    """A declaration needs an optional package that is not installed (``ModelTools`` needs
    Django REST framework). The site skips it and check ``django_mcp.E010`` reports it."""


def exception_handler(exc: Exception, context: Context | None) -> MCPError:
    """Map an unexpected exception from user code to a protocol error.

    The default masks the details as -32603 "Internal error" unless ``DEBUG`` is on, and
    logs the traceback (see :func:`escaped_traceback`). Even with ``DEBUG``, a database
    error is named by its class only: its text names the database server. Replace it with
    the ``EXCEPTION_HANDLER`` setting.
    """
    if isinstance(exc, MCPError):
        return exc
    logger.error("Unhandled exception in MCP handler\n%s", escaped_traceback(exc))
    if settings.DEBUG:
        # A database error's text names the server (host, port): the class name only.
        detail = "" if isinstance(exc, DatabaseError) else f": {exc}"
        return InternalError(data={"exception": f"{type(exc).__name__}{detail}"})
    return InternalError()


def escaped_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` and its causes, with every exception message as a Python
    literal (``repr``). Messages often quote client input (a URI, an argument); written raw,
    a ``\\n`` in that input would forge a line of the server log. The frames come from
    the code and are written as usual."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        suppressed = current.__cause__ is not None or current.__suppress_context__
        current = current.__cause__ if suppressed else current.__context__
    parts: list[str] = []
    for item in reversed(chain):
        parts.append("Traceback (most recent call last):\n")
        parts.extend(traceback.format_tb(item.__traceback__))
        parts.append(f"{type(item).__module__}.{type(item).__qualname__}: {str(item)!r}\n")
    return "".join(parts).rstrip("\n")
