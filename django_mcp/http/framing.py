"""What Django's handler does around a view, for the native paths that run without it.

:class:`~django_mcp.http.native.NativeMCP` (ASGI) and
:class:`~django_mcp.http.native_wsgi.NativeMCPWSGI` (WSGI) serve an MCP ``POST`` without
Django's handler, so what ``BaseHandler`` does around a view must be done here, the same
way, or a project's view-level guarantees would differ by path: the URLconf of the request
and ``request.resolver_match`` (:func:`enter_view`), a transaction per database with
``ATOMIC_REQUESTS`` (:func:`atomic`; within it the view dispatches in a savepoint that a
failure rolls back, :func:`handle_in_savepoint`), and a failure reported as Django reports it
(:func:`answer_failure`: ``got_request_exception`` and an error with its traceback on
``django.request``; a ``SuspiciousOperation`` on ``django.security.*``), while the answer
keeps the protocol's shape (a JSON-RPC error, never Django's HTML page). Recording the
exchange is best-effort on both (:func:`record_best_effort`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import async_to_sync, iscoroutinefunction
from django.conf import settings
from django.core import signals
from django.core.exceptions import SuspiciousOperation
from django.core.handlers.base import BaseHandler
from django.db import connections, transaction
from django.http import HttpResponseBase
from django.urls import set_urlconf
from django.utils.log import log_response

from django_mcp.http.responses import error_response, internal_error
from django_mcp.protocol.errors import InvalidRequest
from django_mcp.server.input_rounds import INPUT_REQUIRED_RESULT

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse, HttpResponseBase
    from django.urls import ResolverMatch

    from django_mcp.protocol.admission import Admitted
    from django_mcp.server.context import Emitter
    from django_mcp.server.dispatch import MCPServer, Reply

logger = logging.getLogger("django_mcp")

#: Django's handler, unconfigured: its ``make_view_atomic`` and ``check_response``, which
#: use nothing of the instance, as patched by whoever patches them (APM tools do).
DJANGO_HANDLER: Final = BaseHandler()


def enter_view(request: HttpRequest, match: ResolverMatch) -> None:
    """The URLconf of this request (``ROOT_URLCONF``) and its ``resolver_match``, as
    ``BaseHandler.get_response`` and ``resolve_request`` set them."""
    set_urlconf(settings.ROOT_URLCONF)
    request.resolver_match = match


def atomic_requests() -> bool:
    """Whether any database wraps each view in a transaction (``ATOMIC_REQUESTS``)."""
    return any(database["ATOMIC_REQUESTS"] for database in connections.settings.values())


def atomic_databases(view: object) -> list[str]:
    """The databases whose transaction Django opens around ``view``: those with
    ``ATOMIC_REQUESTS``, unless the view is exempt (``non_atomic_requests``), as
    ``BaseHandler.make_view_atomic`` decides."""
    exempt: set[str] = getattr(view, "_non_atomic_requests", set())
    return [
        alias
        for alias, database in connections.settings.items()
        if database["ATOMIC_REQUESTS"] and alias not in exempt
    ]


def atomic(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """``view`` in a transaction per database of :func:`atomic_databases`: what
    ``BaseHandler.make_view_atomic`` does."""
    for alias in atomic_databases(view):
        view = transaction.atomic(using=alias)(view)
    return view


def run_view(view: Callable[..., HttpResponseBase], request: HttpRequest) -> HttpResponseBase:
    """``view`` called as Django's handler calls a view: with the values its route
    captured (``request.resolver_match``, set by :func:`enter_view`), which an ``MCPView``
    subclass behind ``<slug:tenant>/mcp`` reads; in its transactions (:func:`atomic`); an
    ``async def`` view (a subclass's ``async def post``) run to its end
    (``async_to_sync``), where Django refuses ``ATOMIC_REQUESTS``; and what it returned
    checked and rendered as Django does it (a view that returned None, or a coroutine,
    raises ``ValueError``, answered as any failure of the view; a template response is
    rendered, with no ``process_template_response`` hook: no middleware runs here, and a
    rendering that is no response is such a failure too)."""
    match = request.resolver_match
    args, kwargs = (match.args, match.kwargs) if match is not None else ((), {})
    if iscoroutinefunction(view):
        if atomic_databases(view):
            raise RuntimeError("You cannot use ATOMIC_REQUESTS with async views.")
        response: HttpResponseBase = async_to_sync(view)(request, *args, **kwargs)
    else:
        response = atomic(view)(request, *args, **kwargs)
    DJANGO_HANDLER.check_response(response, view)
    render = getattr(response, "render", None)
    if callable(render):  # a template response (no middleware, so no hook)
        # Awaited when it is a coroutine function, as Django's ASGI handler awaits it.
        rendered = async_to_sync(render)() if iscoroutinefunction(render) else render()
        if not isinstance(rendered, HttpResponseBase):
            raise ValueError(f"The view {view!r} rendered {rendered!r}, not a response.")
        return rendered
    return response


def handle_in_savepoint(
    request: HttpRequest, server: MCPServer, admitted: Admitted, emit: Emitter | None = None
) -> Reply:
    """``server.handle(admitted, request=request, emit=emit)`` (the dispatch of an admitted
    request, inside the view; the arguments, not a closure built per request) in a savepoint
    of each transaction ``ATOMIC_REQUESTS`` opened for the view, rolled back when the
    reply answers a failure, so that what the handler wrote before it failed is undone.

    Why: Django rolls a view's transaction back when the view raises, but a failing tool
    does not make this view raise, it makes it answer (a tool execution error, a
    JSON-RPC error), and the transaction would commit. An ``input_required`` round counts
    as a failure: the tool runs again from its start once the client answers
    (basic/patterns/multi-round-trip.mdx), so its first writes must not stay. A savepoint
    around the handler alone, rather than the whole transaction marked for rollback (as
    DRF's ``set_rollback`` does): what admission wrote in the same transaction under
    ASGI (a token's last use, rate-limit counters in a database cache) stays, and code
    that writes after the view (a decorator, a middleware inside the transaction) still
    can. The databases are those whose transaction Django opens around the view: with
    ``ATOMIC_REQUESTS``, unless the view is exempt (``non_atomic_requests``).
    """
    aliases = atomic_databases(getattr(request.resolver_match, "func", None))
    if not aliases:
        return server.handle(admitted, request=request, emit=emit)
    with contextlib.ExitStack() as savepoints:
        for alias in aliases:
            savepoints.enter_context(transaction.atomic(using=alias))
        reply = server.handle(admitted, request=request, emit=emit)
        if reply.error is not None or failed_result(reply.result):
            for alias in aliases:
                transaction.set_rollback(True, using=alias)
        return reply


def failed_result(result: dict[str, Any] | None) -> bool:
    """Whether a result answers a failure: a tool execution error, or a round that
    stopped on missing input."""
    return result is not None and (
        result.get("isError") is True or result.get("resultType") == INPUT_REQUIRED_RESULT
    )


def answer_failure(
    request: HttpRequest, exc: Exception, *, answer: HttpResponse | None = None
) -> HttpResponseBase:
    """The answer to an exception that escaped the MCP steps, reported as Django's
    ``response_for_exception`` reports it: a ``SuspiciousOperation`` (a ``Host`` outside
    ``ALLOWED_HOSTS``) is a 400 logged on ``django.security.<name>``; anything else (a bug)
    is a JSON-RPC internal error with status 500, ``got_request_exception`` and an error
    with its traceback on ``django.request``. ``answer`` replaces that internal error (the
    same error with the request's id, once admission has read it)."""
    if isinstance(exc, SuspiciousOperation):
        response = error_response(InvalidRequest("Bad Request"), None)
        log_response(
            str(exc),
            exception=exc,
            request=request,
            response=response,
            level="error",
            logger=logging.getLogger(f"django.security.{type(exc).__name__}"),
        )
        return response
    signals.got_request_exception.send(sender=None, request=request)
    failed = internal_error() if answer is None else answer
    log_response(
        "Internal Server Error: %s",  # Django's words, also when ``answer`` is a 200
        request.path,
        response=failed,
        request=request,
        exception=exc,
        level="error",
    )
    return failed


def log_refusal(request: HttpRequest, response: HttpResponseBase) -> None:
    """A response with status 400 and up, logged on ``django.request`` as
    ``BaseHandler.get_response`` logs it (a warning; an error from 500)."""
    if response.status_code >= 400:
        log_response(
            "%s: %s",
            response.reason_phrase,
            request.path,
            response=response,  # type: ignore[arg-type]
            request=request,
        )


def record_best_effort(
    record: Callable[..., Any],
    request: HttpRequest,
    response: HttpResponseBase,
    *,
    on_event_loop: bool,
) -> None:
    """``record(request, response, on_event_loop=...)``, the middleware's step; a failure
    is logged and never costs the client its answer (the log is best-effort)."""
    try:
        record(request, response, on_event_loop=on_event_loop)
    except Exception:  # the log is best-effort: it never costs the client its answer
        logger.exception("django-mcp could not record an exchange on %s", request.path)
