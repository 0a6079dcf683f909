"""``NativeMCPWSGI``: a WSGI application that serves the MCP endpoints' ``POST`` itself and
hands every other request to Django's.

Opt-in, in ``wsgi.py``::

    from django.core.wsgi import get_wsgi_application
    from django_mcp.http.native_wsgi import NativeMCPWSGI

    application = NativeMCPWSGI(get_wsgi_application())

Why: behind gunicorn (or any WSGI server), Django's handler runs every MCP request through
the project's whole middleware stack (and URL resolution, where the middleware cannot skip
it: :mod:`~django_mcp.http.stack`) before ``MCPView``, and for the
MCP path none of it decides anything (sessions, CSRF, messages, clickjacking headers):
:class:`~django_mcp.http.middleware.MCPMiddleware` and the view do. With the test project's
stack that is about two fifths of a ``tools/call``'s instructions (docs/benchmark.md). So this
application runs exactly the middleware's and the view's steps, the same functions, without
the handler, as :class:`~django_mcp.http.native.NativeMCP` does under ASGI: the path is
looked up in a table (:func:`~django_mcp.http.routes.mcp_match_at`), a Django
``WSGIRequest`` is built, :func:`~django_mcp.http.middleware.before_admission` (``Origin``,
``Host`` against ``ALLOWED_HOSTS``, the body under ``MAX_REQUEST_BYTES``) and
:func:`~django_mcp.http.middleware.admit` run, then the view, and the exchange is recorded
(:func:`~django_mcp.http.middleware.record`).

What Django's handler does around a view happens here too, the same way: the script
prefix, ``request_started`` first (sent by the wrapped handler's class; database
connections past ``CONN_MAX_AGE`` or broken are closed), the URLconf and
``request.resolver_match``, the view in a transaction where ``ATOMIC_REQUESTS`` is on,
failures reported on ``django.request`` and ``got_request_exception`` (but answered in the
protocol's shape), and the response handed to the server as Django hands it, so the
server's ``close()`` sends ``request_finished`` after the last byte (also after a stream
ends). A ``POST`` whose path is not an MCP endpoint, or does not resolve, is Django's to
answer. What the project's other middleware would do for an MCP ``POST`` does not happen:
see docs/deployment.md, "The native WSGI path".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from django.core import signals
from django.core.exceptions import BadRequest, SuspiciousOperation
from django.core.handlers.base import BaseHandler
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest, get_path_info, get_script_name
from django.urls import set_script_prefix

from django_mcp.http.exchange import begin
from django_mcp.http.framing import (
    enter_view,
    log_refusal,
    record_best_effort,
    run_view,
)
from django_mcp.http.routes import mcp_match_at

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase
    from django.urls import ResolverMatch

WSGIEnviron = dict[str, Any]
StartResponse = Callable[..., Any]
WSGIApp = Callable[[WSGIEnviron, StartResponse], Iterable[bytes]]


def readable_request(environ: WSGIEnviron) -> tuple[WSGIRequest, Exception | None]:
    """The request of ``environ``, and the refusal it earns when Django cannot read it: a
    ``Content-Type`` with an RFC 2231 charset naming no codec (``charset*=bogus''x``) or
    one ``codecs.lookup`` refuses (``charset*=''%00`` decodes to NUL) makes
    ``WSGIRequest`` raise ``ValueError``, which Django's handler lets escape
    to the server (a 500 with a traceback, unrecorded). Here the request is built again
    without it, so that a 400 is answered in the protocol's shape and recorded."""
    try:
        return WSGIRequest(environ), None
    except (ValueError, BadRequest):  # Django 6.1+: BadRequest where 5.2 raised ValueError
        request = WSGIRequest({k: v for k, v in environ.items() if k != "CONTENT_TYPE"})
        return request, SuspiciousOperation("The request's Content-Type cannot be read")


class NativeMCPWSGI:
    """Serve ``POST`` on the MCP endpoints without Django's handler; everything else goes
    to ``application`` (Django's WSGI application)."""

    def __init__(self, application: WSGIApp) -> None:
        # Imported here, not at the top: ``wsgi.py`` may import this module before
        # ``get_wsgi_application()`` has set Django up, and the middleware's recorder needs
        # the models. By the time this runs, the argument has set it up.
        from django_mcp.http import middleware

        self.application = application
        # The sender of request_started/request_finished, as Django's handler sends them:
        # a receiver connected for the handler's class hears MCP requests too.
        self.handler_class: type = (
            type(application) if isinstance(application, BaseHandler) else WSGIHandler
        )
        self.before_admission = middleware.before_admission
        self.admit = middleware.admit
        self.record = middleware.record
        self.record_interrupted = middleware.record_interrupted
        self.answer_view_failure = middleware.answer_view_failure

    def __call__(self, environ: WSGIEnviron, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") != "POST":
            return self.application(environ, start_response)
        match = mcp_match_at(get_path_info(environ) or "/")
        if match is None:
            return self.application(environ, start_response)
        return self.serve(match, environ, start_response)

    def serve(
        self, match: ResolverMatch, environ: WSGIEnviron, start_response: StartResponse
    ) -> Iterable[bytes]:
        """One MCP POST, as Django's ``WSGIHandler.__call__`` and ``get_response`` frame a
        request: script prefix, ``request_started``, the URLconf, the response handed back
        so that the server's ``close()`` sends ``request_finished``."""
        set_script_prefix(get_script_name(environ))
        signals.request_started.send(sender=self.handler_class, environ=environ)
        request, unreadable = readable_request(environ)
        enter_view(request, match)
        try:
            response = self.answer(match.func, request, unreadable)
        except BaseException as exc:  # a worker stopped mid-request (gunicorn's timeout)
            self.record_interrupted(request, exc)
            raise
        record_best_effort(self.record, request, response, on_event_loop=False)
        # What the server's close() runs: the request's uploads closed, then
        # request_finished (database connections), as for a response Django's handler made.
        response._resource_closers.append(request.close)  # type: ignore[attr-defined]
        response._handler_class = self.handler_class  # type: ignore[attr-defined]
        if not response.streaming and not response.has_header("Content-Length"):
            # What CommonMiddleware adds on Django's path: the server need not chunk it,
            # and an HTTP/1.0 client keeps its connection.
            response["Content-Length"] = str(len(response.content))  # type: ignore[attr-defined]
        status = f"{response.status_code} {response.reason_phrase}"
        headers = [
            *response.items(),
            *(("Set-Cookie", cookie.output(header="")) for cookie in response.cookies.values()),
        ]
        start_response(status, headers)
        return response

    def answer(
        self,
        view: Callable[..., HttpResponseBase],
        request: HttpRequest,
        unreadable: Exception | None = None,
    ) -> HttpResponseBase:
        """:meth:`respond`, with a failure answered and reported as Django's handler
        reports it, in the protocol's shape, as ``MCPMiddleware.process_exception`` answers
        it (:func:`~django_mcp.http.middleware.answer_view_failure`), and a refusal logged
        as Django logs one. ``unreadable``: the refusal of a request Django could not
        read (:func:`readable_request`), recorded as any refusal."""
        try:
            if unreadable is not None:
                server = view.mcp_server  # type: ignore[attr-defined]
                begin(request, server.site, server)  # so that the refusal is recorded
                raise unreadable
            response = self.respond(view, request)
        except Exception as exc:  # a bug here must still answer, in the protocol's shape
            return self.answer_view_failure(request, exc)
        log_refusal(request, response)
        return response

    def respond(
        self, view: Callable[..., HttpResponseBase], request: HttpRequest
    ) -> HttpResponseBase:
        """The middleware's admission, then the view (in ``ATOMIC_REQUESTS``' transaction
        where that is on, as Django wraps a view): what Django would have answered."""
        server = view.mcp_server  # type: ignore[attr-defined]
        exchange, body, early = self.before_admission(request, server)
        if exchange is None or body is None:
            assert early is not None  # a POST always gets an exchange or an answer
            return early
        refused = self.admit(exchange, request, body)
        return refused or run_view(view, request)
