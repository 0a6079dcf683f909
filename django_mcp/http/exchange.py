"""The one seam between :class:`~django_mcp.http.middleware.MCPMiddleware` and
:class:`~django_mcp.http.views.MCPView`: an :class:`Exchange` per MCP request.

The middleware opens it (:func:`begin`) when the request is routed to an MCP view, stores
the sealed admission in it, and records it after the response; the view reads it with
:func:`exchange_of`, the single documented accessor, and adds the reply. Nothing else
travels between them on the request object.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from django_mcp.conf import mcp_settings
from django_mcp.http import logfacts
from django_mcp.protocol.admission import Admission, Admitted, NotificationAccepted, Rejected
from django_mcp.protocol.methods import NAME_FIELDS
from django_mcp.requestlog.notes import LogNotes, notes_of
from django_mcp.requestlog.records import Outcome, Row, truncated_params

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from django.http import HttpRequest, HttpResponseBase

    from django_mcp.auth.caller import Caller
    from django_mcp.server.dispatch import MCPServer, Reply
    from django_mcp.sites import MCPSite

_ATTRIBUTE: Final = "_django_mcp_exchange"
#: Longest stored error message: the column's length (longer messages are cut).
ERROR_MESSAGE_CHARS: Final = 500


def now() -> datetime.datetime:
    """:func:`django.utils.timezone.now`, with ``USE_TZ`` read from :data:`mcp_settings`
    (cached per settings change) rather than through Django's lazy settings per request."""
    return datetime.datetime.now(datetime.UTC if mcp_settings.use_tz else None)


@dataclass
class Exchange:
    """What is known about one MCP request while it is served."""

    site: MCPSite
    server: MCPServer
    #: From :func:`now`, looked up when the exchange begins (so a test can pin the clock).
    started_at: datetime.datetime = field(default_factory=lambda: now())
    started: float = field(default_factory=time.perf_counter)
    #: Set by the middleware: the outcome of admission (sealed; the view only reads it).
    admission: Admission | None = None
    #: Set by the view: the reply, when it is known before the response is returned.
    reply: Reply | None = None
    #: Set by the view: the reply is a stream, whose end is not known when logging.
    streamed: bool = False
    #: Set by the view under ASGI when the reply streams from a handler still running:
    #: registers what to do when the stream ends (the record waits for its final reply).
    when_stream_ends: Callable[[Callable[[Reply | None], None]], None] | None = None
    #: Set by the view, which runs where the database may be used: the caller, for the log.
    user: AbstractBaseUser | AnonymousUser | None = None
    #: Set by the middleware before admission: who is asking (``AUTHENTICATORS``).
    caller: Caller | None = None
    #: Set when the exchange begins: the client address and ``User-Agent`` for the log.
    remote_addr: str | None = None
    user_agent: str = ""
    #: What deeper layers noted for the log (a declaration hidden by permissions).
    notes: LogNotes = field(default_factory=LogNotes)
    #: Set by the middleware under ASGI when admission may block: the admission, left for
    #: the view to run first in the thread Django runs it in (one thread hop, not two).
    deferred_admission: Callable[[], HttpResponseBase | None] | None = None
    #: Another middleware answered before admission (:mod:`django_mcp.http.unrouted`): its
    #: response is not django-mcp's, so its body is not read for a JSON-RPC error.
    refused_upstream: bool = False
    #: The class name of the database error that kept authentication from knowing the
    #: caller (the database is down): :func:`~django_mcp.http.auth.authorize` answers the
    #: admitted request -32603, so credentials that could not be checked are never served.
    caller_unknown: str | None = None

    def admit_deferred(self) -> HttpResponseBase | None:
        """Run the admission the middleware deferred, if any (once): a refusal's response,
        or None when the view may go on."""
        deferred, self.deferred_admission = self.deferred_admission, None
        return deferred() if deferred is not None else None

    def release(self) -> None:
        """Let go of what the exchange learnt, once it is recorded.

        Why: on Django's own path the request object sits in reference cycles of Django's
        (the lazy ``request.user``'s closure, the message storage's back-reference), so it
        is freed by the cyclic garbage collector, not when the response is done, and
        everything reachable from it waits with it: the admission, the reply and the
        caller were a dozen objects per request added to every young collection (about a
        third of the cyclic garbage an MCP request left, measured with ``gc.DEBUG_SAVEALL``).
        Dropped here, they are freed at once by reference counting. What stays is the
        exchange itself, so :func:`exchange_of` still tells an MCP request from another.
        A stream's producer holds its own references to what it still needs.
        """
        self.admission = self.reply = self.caller = self.user = None
        self.deferred_admission = None

    @property
    def admitted(self) -> Admitted | None:
        """The admitted request, or None when admission ended the exchange."""
        return self.admission if isinstance(self.admission, Admitted) else None

    def record(self, response: HttpResponseBase, note: str = "") -> Row:
        """The request-log record of this exchange, once ``response`` is known: a
        :class:`~django_mcp.requestlog.records.RequestRecord`'s values as a plain tuple, in
        its fields' order, which is what the recorder buffers. ``note``, when given, is the
        record's error message (why an interrupted exchange has no reply).

        Why a plain tuple rather than the named tuple: the record is made once per request
        on the request path, where the named tuple cost its ``_make`` call and then a copy
        into the plain tuple the buffer needs (see :func:`~.recorder.submit`).
        """
        admission, reply = self.admission, self.reply
        method = target = request_id = declared = served = how = ""
        client_name = client_version = error_message = ""
        params: Any = None
        error_code: int | None = None
        outcome: Outcome = "protocol_error"
        if isinstance(admission, Admitted):
            message = admission.request
            method, request_id, params = message.method, str(message.id), message.params
            name_field = NAME_FIELDS.get(method)
            target = str((params or {}).get(name_field, "")) if name_field else ""
            revision = admission.revision
            # ``_value_``, not ``value``: an enum's ``value`` is a Python descriptor call.
            declared, served, how = revision.declared, revision.served, revision.how._value_
            client_info = admission.meta.client_info
            if client_info is not None:
                client_name, client_version = client_info.name, client_info.version
            if reply is not None:
                outcome = reply.outcome
                if reply.error is not None:
                    error_code, error_message = reply.error.code, reply.error.message
            elif self.streamed:
                outcome = "ok"  # the stream is open; its final reply is not known yet
        elif isinstance(admission, NotificationAccepted):
            method, outcome = admission.notification.method, "notification"
        elif isinstance(admission, Rejected):
            method, target = admission.method or "", admission.target or ""
            request_id = "" if admission.request_id is None else str(admission.request_id)
            declared = admission.declared_revision or ""
            error_code, error_message = admission.error.code, admission.error.message
            if admission.revision is not None:
                served, how = admission.revision.served, admission.revision.how.value
            if admission.client_info is not None:
                client_name = admission.client_info.name
                client_version = admission.client_info.version
        elif admission is None and not self.refused_upstream:  # 401, 403, 413, 429, 405
            error_code, error_message = logfacts.response_error(response)
        user = self.caller.user if self.caller is not None else self.user
        user_id: Any = None
        username = ""
        if user is not None and user.is_authenticated:
            user_id, username = user.pk, user.get_username()[:150]
        params_text = (
            truncated_params(params, int(mcp_settings.REQUEST_LOG_PARAMS_MAX_CHARS))
            if mcp_settings.REQUEST_LOG_PARAMS and params is not None
            else None
        )
        # Positional, in the fields' order: ``RequestRecord(field=...)`` costs 1.1 µs (a
        # NamedTuple's ``__new__`` matches its 21 keywords in Python).
        # tests/records/test_record_fields.py checks every field of a row by name, and
        # that a record has as many values as the named tuple has fields.
        return (
            self.started_at,  # started_at
            self.site.name,  # site
            method[:100],  # method
            target[:255],  # target
            request_id[:100],  # request_id
            declared[:50] if isinstance(declared, str) else "",  # declared_revision
            served,  # served_revision
            how,  # served_how
            client_name[:200],  # client_name
            client_version[:100],  # client_version
            user_id,  # user_id
            username,  # username
            outcome,  # outcome
            error_code,  # error_code
            response.status_code,  # http_status
            (time.perf_counter() - self.started) * 1000,  # duration_ms
            params_text,  # params
            note or error_message[:ERROR_MESSAGE_CHARS],  # error_message
            self.notes.permission_denied,  # permission_denied
            self.remote_addr,  # remote_addr
            self.user_agent,  # user_agent
        )


def begin(request: HttpRequest, site: MCPSite, server: MCPServer) -> Exchange:
    """Open the exchange of ``request`` (the middleware, once per MCP request)."""
    exchange = Exchange(
        site,
        server,
        remote_addr=logfacts.remote_addr(request),
        user_agent=logfacts.user_agent(request),
        notes=notes_of(request),
    )
    setattr(request, _ATTRIBUTE, exchange)
    return exchange


def exchange_of(request: HttpRequest) -> Exchange | None:
    """The exchange of ``request``, or None when no MCP middleware admitted it."""
    exchange: Exchange | None = getattr(request, _ATTRIBUTE, None)
    return exchange
