"""``MCPMiddleware``: the HTTP face of admission (ADR 0002, "validate once").

For requests routed to an :class:`~django_mcp.http.views.MCPView` only, it answers
non-POST with 405, checks ``Origin`` (403) and ``Host``, reads the body once under a size
limit, authenticates the caller (401, :mod:`django_mcp.http.auth`), asks the view's server
to admit the message (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and
``Mcp-Param-*`` are checked there, against the body) and answers every rejection before
the view runs. After the response it records the exchange, also when the project's stack
answered an MCP URL before ``process_view`` ran (a ``Host`` outside ``ALLOWED_HOSTS``,
refused by ``CommonMiddleware``: :mod:`django_mcp.http.unrouted`). Other URLs: untouched.

It is sync and async capable, so under ASGI Django adapts nothing around it: the
admission runs on the event loop, except where it may need the database (a request
carrying credentials, a rate limit's counters, ``tasks/*`` on a site whose tools need
scopes, or a site whose declarations are gated by permissions, see
:meth:`~django_mcp.sites.MCPSite.varies_by_caller`). Then it is deferred to the start of
the view (:meth:`~django_mcp.http.views.MCPView.dispatch`), which Django already runs in a
thread: one thread hop per request instead of two, each costing tens of microseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from time import perf_counter
from typing import TYPE_CHECKING, Any, ClassVar, Final

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.functional import SimpleLazyObject, empty

from django_mcp.conf import mcp_settings
from django_mcp.http import auth
from django_mcp.http.body import read_body
from django_mcp.http.browser import endpoint_page, varies_on_accept
from django_mcp.http.exchange import Exchange, begin, exchange_of
from django_mcp.http.framing import answer_failure, record_best_effort
from django_mcp.http.hosts import check_host
from django_mcp.http.origins import origin_allowed
from django_mcp.http.responses import (
    admission_response,
    error_response,
    method_not_allowed,
    reply_response,
)
from django_mcp.http.stack import (
    LearntRoutes,
    host_checked_upstream,
    serve_route,
    shortcut_allowed,
)
from django_mcp.http.throttle import rate_limited_at_all, throttle
from django_mcp.http.unrouted import open_unrouted_exchange
from django_mcp.protocol.errors import ForbiddenOrigin, InternalError, ParseError, RequestTooLarge
from django_mcp.protocol.headers import normalise_environ
from django_mcp.requestlog import recorder
from django_mcp.server.authorization import task_scopes_checked
from django_mcp.server.dispatch import Reply
from django_mcp.server.outage import resolved_user

if TYPE_CHECKING:
    from django_mcp.server.dispatch import MCPServer
    from django_mcp.sites import MCPSite


#: The answer to a body the server could not read to its end (a client that went away, a
#: connection reset): a parse error, since no complete message arrived.
UNREADABLE_BODY: Final = "The request body could not be read to its end"


#: The log's note of an exchange that ended without a response from Django (see
#: :func:`record_interrupted`), with the status it is logged under.
WORKER_STOPPED: Final = (500, "The server stopped the request before it was answered")
CLIENT_LEFT: Final = (499, "The client went away before the request was answered")


def record_interrupted(
    request: HttpRequest,
    exc: BaseException,
    *,
    when_cancelled: tuple[int, str] = CLIENT_LEFT,
) -> None:
    """Record an exchange that ends in ``exc`` instead of a response: Django turns every
    ``Exception`` into one, so this is a ``BaseException``. gunicorn's timeout raises
    ``SystemExit`` in the worker it stops (the worker still writes its buffered records at
    exit), and under ASGI Django cancels a request whose client went away. The request
    happened all the same, so the log keeps it: 499 (nginx's "client closed request") when
    it was cancelled, 500 otherwise, with a note saying why (``when_cancelled``: a path
    where only a server shutting down cancels a request says so). No user is looked up,
    and the exchange is not released (the view's thread may yet run its admission)."""
    cancelled = isinstance(exc, asyncio.CancelledError)
    status, note = when_cancelled if cancelled else WORKER_STOPPED
    # Best-effort: a failure here must not replace ``exc``, which the caller re-raises (a
    # worker that gets an error instead of its SystemExit does not stop).
    record_best_effort(
        partial(record, note=note, release=False),
        request,
        HttpResponse(status=status),
        on_event_loop=True,
    )


def record(
    request: HttpRequest,
    response: HttpResponseBase,
    *,
    on_event_loop: bool,
    note: str = "",
    release: bool = True,
) -> None:
    """Queue the exchange's log record (never touches the database), then release the
    exchange (:meth:`~django_mcp.http.exchange.Exchange.release`).

    The view notes the caller of every request it served. For a request refused before the
    view, the sync path still reads ``request.user`` (None if the database is down, so a
    refusal stays a refusal); on the event loop that could query the database, and for a
    request another middleware refused (:mod:`django_mcp.http.unrouted`) it could fail in
    a session store that middleware was shielding, so there the user is taken only if
    something already resolved it. ``note``, when given, is the row's error message.
    """
    exchange = exchange_of(request)
    if exchange is None:
        return
    when_stream_ends = exchange.when_stream_ends
    if when_stream_ends is not None and not note:
        # A reply still streaming from its handler (ASGI): recorded when the stream ends,
        # with the reply it sent and its whole duration, or as a client gone (499).
        exchange.when_stream_ends = None
        # Its status, never the response: the stream (kept by the response's finalizer)
        # must not keep the response alive, or that finalizer never runs.
        status = response.status_code
        when_stream_ends(partial(_record_streamed, request, status, release=release))
        return
    try:
        if mcp_settings.REQUEST_LOG == "off":
            return
        if exchange.user is None and exchange.caller_unknown is None:  # unknown: logged
            user = getattr(request, "user", None)
            if not (on_event_loop or exchange.refused_upstream):
                exchange.user = resolved_user(request)
            elif not _is_unresolved(user):
                exchange.user = user
        recorder.submit(exchange.record(response, note))
    finally:
        if release:
            exchange.release()  # recorded (or not kept): see Exchange.release


def _record_streamed(
    request: HttpRequest, status: int, reply: Reply | None, *, release: bool
) -> None:
    """Record a live stream that ended, on the loop or the thread that ended it (nothing
    here touches the database): with the reply it sent, or, if it ended before its reply
    (the client closed it, which cancelled the handler), as 499 with the client-gone note."""
    exchange = exchange_of(request)
    if exchange is None:
        return
    if reply is not None:
        exchange.reply = reply
        sent = HttpResponse(status=status)
        record_best_effort(partial(record, release=release), request, sent, on_event_loop=True)
        return
    exchange.streamed = False  # no reply was sent: not "ok"
    gone = partial(record, note=CLIENT_LEFT[1], release=release)
    record_best_effort(gone, request, HttpResponse(status=CLIENT_LEFT[0]), on_event_loop=True)


def answer_view_failure(request: HttpRequest, exc: Exception) -> HttpResponseBase:
    """An exception out of an MCP view or its ``ATOMIC_REQUESTS`` transaction, on every
    path: once admitted, -32603 with the request's id (HTTP 200), recorded so; reported
    as Django reports one (:func:`~django_mcp.http.framing.answer_failure`)."""
    exchange = exchange_of(request)
    if exchange is None or (admitted := exchange.admitted) is None:
        return answer_failure(request, exc)
    exchange.reply = reply = Reply(admitted.request.id, error=InternalError())
    return answer_failure(request, exc, answer=reply_response(reply))


def _is_unresolved(user: Any) -> bool:
    """Whether ``user`` is a lazy object that would have to be evaluated (a query)."""
    return isinstance(user, SimpleLazyObject) and user._wrapped is empty


def before_admission(
    request: HttpRequest, server: MCPServer, *, host_checked: bool = False
) -> tuple[Exchange | None, bytes | None, HttpResponseBase | None]:
    """Everything before admission, with no database access: ``(exchange, body, None)``
    to go on admitting, or an early response (a browser's page, 405, 403, 413).

    ``host_checked``: the caller knows ``Host`` already passed ``ALLOWED_HOSTS`` for this
    request (:func:`host_checked_upstream`), so it is not validated a second time.
    """
    site = server.site
    if request.method != "POST":
        page = endpoint_page(request, site)  # a browser's GET: not an MCP exchange
        if page is not None:
            return None, None, page
        return begin(request, site, server), None, varies_on_accept(request, method_not_allowed())
    exchange = begin(request, site, server)
    if not host_checked:
        # Enforces ALLOWED_HOSTS (DNS rebinding) even without CommonMiddleware; first, as
        # CommonMiddleware would, so a bad Host is a 400 whatever the Origin.
        check_host(request)
    origin = request.META.get("HTTP_ORIGIN")
    if origin is not None and not origin_allowed(origin, mcp_settings.ALLOWED_ORIGINS):
        return exchange, None, error_response(ForbiddenOrigin(), None)
    try:
        body = read_body(request, int(mcp_settings.MAX_REQUEST_BYTES))
    except RequestTooLarge as exc:
        return exchange, None, error_response(exc, None)
    except OSError:  # UnreadablePostError: the client went away mid-body (its fault, not ours)
        return exchange, None, error_response(ParseError(UNREADABLE_BODY), None)
    return exchange, body, None


def admission_needs_thread(request: HttpRequest, exchange: Exchange) -> bool:
    """Whether :func:`admit` may block: credentials, permission checks and rate-limit
    counters (a blocking cache client) may query the database or the network, so on an
    event loop it must run in a thread; otherwise it runs on the loop itself. So may a
    lookup of the site's own (``get_tool``...), which admission asks for the target's
    headers and scopes even on a site that says it decides nothing per caller."""
    return (
        auth.needs_database(request)
        or exchange.site.varies_by_caller()
        or bool(exchange.site.own_lookups)
        or rate_limited_at_all()
        or acts_on_a_scoped_task(request, exchange.site)
    )


def acts_on_a_scoped_task(request: HttpRequest, site: MCPSite) -> bool:
    """Whether the request, by its ``Mcp-Method``, is ``tasks/get|update|cancel`` on a site
    where such a request needs the task's tool's scopes: their check reads the task row.
    The header is checked against the body before the scopes are, so a request whose
    header says otherwise never reaches that check."""
    method = request.META.get("HTTP_MCP_METHOD")
    return method is not None and task_scopes_checked(site, method.strip())


def admit(exchange: Exchange, request: HttpRequest, body: bytes) -> HttpResponseBase | None:
    """Authenticate (401), count against the rate limits (429), admit, then check the
    target's scopes (401/403); None when the view must run."""
    refused = auth.authenticate(request, exchange) or auth.refuse_unknown_caller(exchange, body)
    if refused is not None:
        # Counted too (by address: it has no caller), or failed sign-ins, a wrong password
        # through DRF's BasicAuthentication say, could be retried without limit.
        return throttle(request, exchange, body) or refused
    if (limited := throttle(request, exchange, body)) is not None:
        return limited
    headers = normalise_environ(request.META, getattr(request, "scope", None))  # ASGI's lines
    admission = exchange.server.admit(body, headers, request=request)
    exchange.admission = admission  # sealed: the view only reads it
    answered = admission_response(admission)
    return answered or auth.authorize(request, exchange, admission)


class MCPMiddleware:
    """Admit MCP requests before their view runs; record every MCP exchange.

    The steps are module functions (:func:`before_admission`, :func:`admit`,
    :func:`record`) because :class:`~django_mcp.http.native.NativeMCP` runs the very
    same ones without Django's handler.
    """

    sync_capable = True
    async_capable = True
    #: Under WSGI, serve a ``POST`` on a path Django has routed to an MCP view without
    #: resolving it again, where nothing else would act (:mod:`django_mcp.http.stack`).
    #: False in a subclass for a project that edits its ``urlpatterns`` at run time
    #: without ``clear_url_caches()``.
    learns_routes: ClassVar[bool] = True

    def __init__(
        self,
        get_response: Callable[[HttpRequest], HttpResponseBase]
        | Callable[[HttpRequest], Awaitable[HttpResponseBase]],
    ) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        # Read where Django builds the chain this instance belongs to, from the same list.
        self.host_checked = host_checked_upstream(settings.MIDDLEWARE)
        # Under WSGI, a path Django has routed to an MCP view is served without the
        # handler's resolution when nothing else would run around the view (see
        # django_mcp.http.stack); under ASGI Django's thread hop for the view dominates.
        self.routes: LearntRoutes | None = None
        if (
            self.learns_routes
            and not self.is_async
            and shortcut_allowed(settings.MIDDLEWARE, type(self))
        ):
            self.routes = LearntRoutes()
        if self.is_async:
            markcoroutinefunction(self)
            # Django adapts a sync process_view with a thread hop; under ASGI offer the
            # coroutine version instead (it looks the attribute up once, at start-up).
            self.process_view = self.aprocess_view  # type: ignore[method-assign,assignment]

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        started = perf_counter()
        routes = self.routes
        try:
            if routes is not None and (match := routes.match(request)) is not None:
                response = serve_route(request, match, self.process_view, self.process_exception)
            else:
                response = self.get_response(request)  # type: ignore[assignment]
                if routes is not None:
                    routes.learn(request)
        except BaseException as exc:
            record_interrupted(request, exc)
            raise
        open_unrouted_exchange(request, response, started)
        record(request, response, on_event_loop=False)
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        started = perf_counter()
        try:
            response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]
        except BaseException as exc:
            record_interrupted(request, exc)
            raise
        open_unrouted_exchange(request, response, started)
        record(request, response, on_event_loop=True)
        return response

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponseBase | None:
        server: MCPServer | None = getattr(view_func, "mcp_server", None)
        if server is None:
            return None
        try:
            exchange, body, early = before_admission(
                request, server, host_checked=self.host_checked
            )
            return early if exchange is None or body is None else admit(exchange, request, body)
        except Exception as exc:  # see aprocess_view
            return answer_view_failure(request, exc)

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponseBase | None:
        """An exception out of an MCP view (a bug, or its ``ATOMIC_REQUESTS`` transaction
        with the database down): :func:`answer_view_failure`'s answer, not Django's HTML
        500 (which, under ``DEBUG``, names the database server). Other views: Django's."""
        if exchange_of(request) is None:
            return None
        return answer_view_failure(request, exception)

    async def aprocess_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponseBase | None:
        server: MCPServer | None = getattr(view_func, "mcp_server", None)
        if server is None:
            return None
        try:
            exchange, body, early = before_admission(
                request, server, host_checked=self.host_checked
            )
            if exchange is None or body is None:
                return early
            if not admission_needs_thread(request, exchange):
                return admit(exchange, request, body)
            if iscoroutinefunction(view_func):  # an async view would admit on the loop
                return await sync_to_async(admit)(exchange, request, body)
        except Exception as exc:
            # Django answers an exception out of process_view with its HTML 500 page (the
            # view's own go to process_exception): a bug, or a rate limit's cache server
            # down, is answered in the protocol's shape instead, as on the native paths.
            # In a thread, as Django reports one under ASGI: the report's receivers and
            # handlers (mail to ADMINS) may block or query the database.
            return await sync_to_async(answer_view_failure, thread_sensitive=False)(request, exc)
        # The sync view runs in a thread anyway: admission goes first there (MCPView.dispatch).
        exchange.deferred_admission = partial(admit, exchange, request, body)
        return None
