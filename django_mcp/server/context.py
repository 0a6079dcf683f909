"""The per-request :class:`Context` a handler can ask for by annotating a parameter.

It carries what MCP 2026-07-28 sends on every request (declared revision, client info and
capabilities) and what Django knows (the ``HttpRequest`` and the :class:`Caller` the
authenticators resolved for it). Nothing in it survives the request: the protocol is
stateless.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from django_mcp.auth.caller import Caller
from django_mcp.auth.resolve import attach, caller_of
from django_mcp.declarations.signature import Injected
from django_mcp.exceptions import RequestCancelled
from django_mcp.protocol import methods
from django_mcp.protocol.meta import LOG_LEVELS, ClientInfo, RequestMeta
from django_mcp.protocol.revisions import RevisionDecision
from django_mcp.server.input_requests import (
    Elicit,
    ElicitResult,
    ElicitURL,
    InputRequest,
    ListRoots,
    Sample,
)
from django_mcp.server.input_rounds import Inputs, inputs_for
from django_mcp.server.progress import Pacer, checked_progress

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from django.http import HttpRequest

    from django_mcp.protocol.jsonrpc import RequestId
    from django_mcp.sites import MCPSite

Emitter = Callable[[dict[str, Any]], None]


class Context(Injected):
    """What a tool, resource or prompt handler may know about the request it serves."""

    def __init__(
        self,
        *,
        site: MCPSite,
        method: str,
        request_id: RequestId | None,
        meta: RequestMeta,
        revision: RevisionDecision,
        request: HttpRequest | None = None,
        user: AbstractBaseUser | AnonymousUser | None = None,
        emit: Emitter | None = None,
        caller: Caller | None = None,
    ) -> None:
        self.site = site
        self.method = method
        self.request_id = request_id
        self.meta = meta
        self.revision = revision
        self.request = request
        if caller is None:
            caller = caller_of(request) if user is None else None
        if caller is None:  # no authentication ran: a bare user, limited by no scope
            given = user if user is not None else getattr(request, "user", None)
            caller = Caller(user=given, method="request")
        #: Who is asking: the user, the scopes their credential grants, its id.
        self.caller = caller
        self.user = caller.user
        self._emit = emit
        self._last_progress: float | None = None
        self._progress_pacer: Pacer[dict[str, Any]] | None = None
        # Around "must increase" and the offer: a tool reporting from several threads must
        # not offer a smaller value after a larger one passed the check.
        self._progress_lock = threading.Lock()
        self.cancelled = False
        self._inputs: Inputs | None = None
        self._inputs_of: tuple[str, Mapping[str, Any], str] | None = None
        self._cancel_callbacks: list[Callable[[], None]] = []

    def reidentify(self, caller: Caller) -> None:
        """Decide with ``caller`` from now on: this context's caller as read again while
        the request goes on (a listen stream's recheck re-reads its user and credential,
        :mod:`django_mcp.listen.recheck`), so what it may read is decided as now. The
        request's too: ``ctx.request.user`` is ``ctx.user`` (a check may read either), and
        :func:`~django_mcp.auth.resolve.caller_of` gives this caller."""
        self.caller = caller
        self.user = caller.user
        if self.request is not None:
            attach(self.request, caller)

    @property
    def inputs(self) -> Inputs | None:
        """The answers this round may use (None for a method that cannot ask for input).
        Built on first use when :meth:`defer_inputs` deferred them."""
        if self._inputs is None and self._inputs_of is not None:
            method, params, principal = self._inputs_of
            self._inputs_of = None
            self._inputs = inputs_for(method, params, self, principal)
        return self._inputs

    @inputs.setter
    def inputs(self, value: Inputs | None) -> None:
        self._inputs, self._inputs_of = value, None

    def defer_inputs(self, method: str, params: Mapping[str, Any], principal: str) -> None:
        """Build :attr:`inputs` of ``method`` from ``params``, bound to ``principal``, only
        if a handler asks for them (see :func:`~django_mcp.server.input_rounds.attach_inputs`)."""
        self._inputs, self._inputs_of = None, (method, params, principal)

    @property
    def declared_revision(self) -> str:
        """The ``protocolVersion`` the client declared on this request."""
        return self.revision.declared

    @property
    def client_info(self) -> ClientInfo | None:
        """The client's self-reported name and version: for display and logs only."""
        return self.meta.client_info

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        """The capabilities the client declared for this request (never inferred)."""
        return self.meta.client_capabilities

    @property
    def scopes(self) -> frozenset[str] | None:
        """The scopes the caller's credential grants; None when it is not scope-limited.
        As granted: to ask whether the caller may act with a scope, counting what its
        scopes imply (``SCOPE_HIERARCHY``), use ``ctx.caller.has_scopes([...])``."""
        return self.caller.scopes

    @property
    def principal(self) -> str:
        """Who is asking, as bound into signed cursors and request state
        (:attr:`Caller.principal`): ``user:<pk>``, ``client:<id>`` for a token acting for
        no user, else ``anonymous``."""
        return self.caller.principal

    @property
    def can_stream(self) -> bool:
        """Whether notifications sent now can reach the client (an SSE stream is open)."""
        return self._emit is not None

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` if the client asked for it with a progressToken.

        Progress must increase; a value not above the last one is dropped. Without a token
        or an open stream this does nothing, so tools can call it unconditionally. Values
        the notification cannot carry raise at once, token or not (:func:`checked_progress`).
        At most one notification goes per ``PROGRESS_INTERVAL``; a report sooner than that
        is held, and the newest held one goes once the interval has passed, or just before
        the reply (:mod:`django_mcp.server.progress`).
        """
        progress, total, message = checked_progress(progress, total, message)
        self.check_cancelled()
        token = self.meta.progress_token
        if token is None or self._emit is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        with self._progress_lock:
            if self._last_progress is not None and progress <= self._last_progress:
                return
            self._last_progress = progress
            if self._progress_pacer is None:
                self._progress_pacer = Pacer(self._send_progress)
            pacer = self._progress_pacer
            if not pacer.hold(params):  # held in the order checked; sent outside this lock
                return
        pacer.drain()

    def _send_progress(self, params: dict[str, Any]) -> None:
        """The pacer's ``send`` (the handler's thread, or the flushing thread for a report
        it held): never once the request is cancelled."""
        if self._emit is not None and not self.cancelled:
            self._emit({"method": methods.NOTIFICATION_PROGRESS, "params": params})

    def end_progress(self) -> None:
        """The handler is done and its reply comes next: send the progress report the
        pacer still holds, if any (not once the request is cancelled), and nothing after."""
        with self._progress_lock:
            pacer, self._progress_pacer = self._progress_pacer, None  # no cycle left behind
            self._last_progress = float("inf")  # a thread the tool left behind sends nothing
        if pacer is not None:
            pacer.close(send_held=not self.cancelled)

    def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the request asked for logs at ``level`` or
        below it; never without a ``logLevel`` (server/utilities/logging.mdx)."""
        if level not in LOG_LEVELS:
            raise ValueError(f"Unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        self.check_cancelled()
        wanted = self.meta.log_level
        if wanted is None or self._emit is None:
            return
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self._emit({"method": methods.NOTIFICATION_MESSAGE, "params": params})

    # -- cancellation (basic/patterns/cancellation.mdx) -----------------------------------

    def cancel(self) -> None:
        """Mark the request cancelled and stop an async handler; called by transports."""
        self.cancelled = True
        for callback in list(self._cancel_callbacks):
            callback()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` if the request is cancelled (at once if it already is)."""
        self._cancel_callbacks.append(callback)
        if self.cancelled:
            callback()

    def check_cancelled(self) -> None:
        """Raise :class:`~django_mcp.exceptions.RequestCancelled` if the client went away;
        long sync handlers call this (or ``report_progress``) between steps."""
        if self.cancelled:
            raise RequestCancelled()

    # -- multi round-trip input (basic/patterns/mrtr.mdx) -------------------------------

    def request_input(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        """Answers for every key of ``requests``; when some are missing, this round ends
        with ``input_required`` and the handler runs again on the client's retry.

        Works in tools, prompts and resource reads. Side effects before this call repeat
        on every round, so ask first and act after.
        """
        if self.inputs is None:
            raise RuntimeError(f"{self.method} cannot ask the client for input")
        return self.inputs.collect(requests)

    def elicit(self, message: str, schema: Any = None, *, key: str = "elicitation") -> ElicitResult:
        """Ask the user to fill a form. ``schema`` is a flat JSON Schema object, a pydantic
        model (then ``result.data`` is an instance) or ``{"name": str, ...}``."""
        result: ElicitResult = self.request_input({key: Elicit(message, schema)})[key]
        return result

    def elicit_url(self, message: str, url: str, *, key: str = "elicitation") -> ElicitResult:
        """Ask the user to open ``url`` (URL-mode elicitation)."""
        result: ElicitResult = self.request_input({key: ElicitURL(message, url)})[key]
        return result

    def sample(
        self, prompt: str | list[dict[str, Any]], *, max_tokens: int = 1000, key: str = "sampling"
    ) -> dict[str, Any]:
        """Ask the client's model (deprecated in 2026-07-28, still specified)."""
        messages = (
            [{"role": "user", "content": {"type": "text", "text": prompt}}]
            if isinstance(prompt, str)
            else prompt
        )
        result: dict[str, Any] = self.request_input({key: Sample(messages, max_tokens)})[key]
        return result

    def list_roots(self, *, key: str = "roots") -> list[dict[str, Any]]:
        """Ask for the client's roots (deprecated in 2026-07-28, still specified)."""
        roots: list[dict[str, Any]] = self.request_input({key: ListRoots()})[key]
        return roots

    def __repr__(self) -> str:
        return f"<Context {self.method} id={self.request_id!r}>"
