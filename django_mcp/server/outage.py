"""What serving does when the database is down: refusals stay refusals, and a request
whose handling needs the database gets a JSON-RPC error, never an HTML page.

Why: Django resolves ``request.user`` lazily, and with a session cookie that is a query.
Where django-mcp resolves the caller (the view, for the log and the ``Context``; the
middleware, to record a request it refused; admission, for a site whose declarations are
gated by permissions), a down database used to raise through the middleware: an HTML 500
(with ``DEBUG``, one naming the database host and port), even for a request that should
have been refused with 403. So:

- :func:`resolved_user` evaluates the user where a database error can be handled, and
  gives None when it cannot be known (the request log then records no user; a handler
  that needs the caller meets the same error again inside dispatch, where the exception
  handler answers -32603);
- :data:`DATABASE_NEEDED` turns a database error during admission into
  :class:`~django_mcp.protocol.errors.InternalError`, which admission answers as -32603
  with the request's id (HTTP 200, per ``STATUS_BY_ERROR``).

The error text, which names the database server, is logged, never sent.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from django.db import DatabaseError

from django_mcp.protocol.errors import InternalError

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from django.http import HttpRequest

logger = logging.getLogger("django_mcp")


def log_unresolved_caller(exc: DatabaseError) -> None:
    """Log (by class; the traceback names the server) that the caller could not be known."""
    logger.error("django-mcp could not resolve the caller: %s", type(exc).__name__, exc_info=exc)


def resolved_user(request: HttpRequest | Any) -> AbstractBaseUser | AnonymousUser | None:
    """``request.user``, evaluated now; None when there is none or the database is down."""
    user: AbstractBaseUser | AnonymousUser | None = getattr(request, "user", None)
    if user is None:
        return None
    try:
        user.is_authenticated  # noqa: B018 - evaluates a lazy user (a session query)
    except DatabaseError as exc:
        log_unresolved_caller(exc)
        return None
    return user


class _DatabaseNeeded:
    """Raise :class:`InternalError` (its text names no server) for a database error.

    A class, used through its one instance :data:`DATABASE_NEEDED`: it holds no state (so
    it is reentrant and shared by threads), and entering it starts no generator, which a
    ``@contextmanager`` would build on every request."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(exc, DatabaseError):
            logger.error(
                "django-mcp could not reach the database: %s", type(exc).__name__, exc_info=exc
            )
            raise InternalError() from exc


#: ``with DATABASE_NEEDED:`` around what may query a database that is down.
DATABASE_NEEDED: Final = _DatabaseNeeded()
