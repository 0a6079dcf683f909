"""``MCPServer``: admits a message and dispatches it, the one path every transport shares.

``admit`` wraps the pure :func:`~django_mcp.protocol.admission.admit` with the site's
catalogue and the configured revision policy; ``handle`` turns an admitted request into a
:class:`Reply`. Exceptions from user code are caught exactly once, here, and mapped by the
configured exception handler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from django.utils.functional import LazyObject, empty

from django_mcp.conf import mcp_settings
from django_mcp.exceptions import RequestCancelled
from django_mcp.listen.listener import Listener
from django_mcp.protocol import jsonrpc
from django_mcp.protocol.admission import Admission, Admitted, admit
from django_mcp.protocol.errors import InternalError, MCPError
from django_mcp.protocol.headers import HeaderParam
from django_mcp.protocol.meta import SERVER_INFO_KEY, RequestMeta
from django_mcp.protocol.methods import TOOLS_CALL
from django_mcp.protocol.revisions import RevisionDecision
from django_mcp.protocol.subscriptions import SubscriptionFilter
from django_mcp.server import input_rounds
from django_mcp.server.authorization import gated
from django_mcp.server.capabilities import capabilities, offers, supports_listen
from django_mcp.server.context import Context, Emitter
from django_mcp.server.handlers import HANDLERS
from django_mcp.server.handlers.listen import LISTEN_CAPABILITY
from django_mcp.server.handlers.tasks import TASKS_CAPABILITY
from django_mcp.server.handlers.tools import acall_tool
from django_mcp.server.input_rounds import InputRequired, input_required_result
from django_mcp.server.outage import DATABASE_NEEDED
from django_mcp.server.tasking import listen_filter, may_follow, supports_tasks

if TYPE_CHECKING:
    from django.http import HttpRequest

    from django_mcp.sites import MCPSite

Outcome = Literal["ok", "tool_error", "protocol_error"]


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to one admitted request: a result or a protocol error."""

    request_id: jsonrpc.RequestId
    result: dict[str, Any] | None = None
    error: MCPError | None = None

    @property
    def outcome(self) -> Outcome:
        if self.error is not None:
            return "protocol_error"
        if self.result is not None and self.result.get("isError") is True:
            return "tool_error"
        return "ok"

    def to_message(self) -> dict[str, Any]:
        if self.error is not None:
            return jsonrpc.error_response(self.error, self.request_id)
        assert self.result is not None
        return jsonrpc.result_response(self.request_id, self.result)


class SiteCatalogue:
    """The :class:`~django_mcp.protocol.admission.Catalogue` of one site for one caller."""

    def __init__(self, site: MCPSite, request: HttpRequest | None) -> None:
        self.site = site
        self.request = request

    def implements(self, method: str) -> bool:
        handler = HANDLERS.get(method)
        if handler is None:
            return False
        if handler.capability is None:
            return True
        if handler.capability == LISTEN_CAPABILITY:
            return supports_listen(self.site)
        if handler.capability == TASKS_CAPABILITY:
            return supports_tasks(self.site)
        return offers(self.site, handler.capability)

    def tool_header_params(
        self, name: str, meta: Callable[[], RequestMeta], revision: RevisionDecision
    ) -> Mapping[str, HeaderParam] | None:
        site = self.site
        spec = site.registry.tools.get(name)  # one dict get on a site of no lookup of its own
        if gated(site, spec):  # only a permission check needs the caller's Context
            context = Context(
                site=site,
                method=TOOLS_CALL,
                request_id=None,
                meta=meta(),
                revision=revision,
                request=self.request,
            )
            with DATABASE_NEEDED:  # a permission check may query a database that is down
                spec = site.get_tool(name, context)
        elif "tools" in site.own_lookups:  # its own lookup, not the registry, serves tools
            with DATABASE_NEEDED:
                spec = site.get_tool(name)
        return None if spec is None else spec.header_params


class MCPServer:
    """Serves one :class:`~django_mcp.sites.MCPSite`."""

    def __init__(self, site: MCPSite) -> None:
        self._site = site

    @property
    def site(self) -> MCPSite:
        """The site itself, never Django's lazy proxy of the default site: every attribute
        read through the proxy costs a wrapper call, and a request reads dozens. Unwrapped
        on each access (not once), so resetting the default site still takes effect."""
        site = self._site
        if isinstance(site, LazyObject):
            if site._wrapped is empty:
                site._setup()
            return site._wrapped  # type: ignore[no-any-return]
        return site

    def admit(
        self,
        body: bytes,
        headers: Mapping[str, str] | None,
        *,
        request: HttpRequest | None = None,
    ) -> Admission:
        """Apply every protocol rule to one raw message (see the protocol package)."""
        return admit(
            body,
            headers,
            SiteCatalogue(self.site, request),
            mcp_settings.revision_policy,
            max_depth=int(mcp_settings.MAX_JSON_DEPTH),
        )

    def context_for(
        self,
        admitted: Admitted,
        *,
        request: HttpRequest | None = None,
        emit: Emitter | None = None,
    ) -> Context:
        return Context(
            site=self.site,
            method=admitted.request.method,
            request_id=admitted.request.id,
            meta=admitted.meta,
            revision=admitted.revision,
            request=request,
            emit=emit,
        )

    def handle(
        self,
        admitted: Admitted,
        *,
        request: HttpRequest | None = None,
        emit: Emitter | None = None,
        on_context: Callable[[Context], None] | None = None,
    ) -> Reply:
        """Run the method's handler and wrap its result, or map its failure.

        ``emit`` receives request-scoped notifications (when the transport can stream);
        ``on_context`` receives the :class:`Context` first, so a transport can cancel it.
        """
        context = self.context_for(admitted, request=request, emit=emit)
        if on_context is not None:
            on_context(context)
        method, params = admitted.request.method, admitted.request.params or {}
        handler = HANDLERS[method]
        try:
            if method in input_rounds.INPUT_METHODS:
                input_rounds.attach_inputs(method, params, context)
            try:
                result = handler.func(self, params, context)
            except InputRequired as exc:
                assert context.inputs is not None
                result = input_required_result(exc, context.inputs)
            else:
                input_rounds.mark_uncacheable_retry(method, params, result)
        except Exception as exc:  # the one dispatch boundary (docs/adr/0002-validate-once.md)
            return self.failure(admitted, exc, context)
        finally:  # the last report a pacer held goes before the reply; nothing after it
            context.end_progress()
        return Reply(admitted.request.id, result=self.finish_result(result))

    def runs_on_loop(self, admitted: Admitted) -> bool:
        """Whether ``admitted`` may be dispatched on an event loop, with no thread: a
        ``tools/call`` of an ``async def`` tool that never runs as a task, on a site that
        gates nothing by permission (so finding the tool queries nothing)."""
        if admitted.request.method != TOOLS_CALL or self.site.varies_by_caller():
            return False
        spec = self.site.get_tool(str((admitted.request.params or {}).get("name", "")))
        return spec is not None and spec.task is None and spec.is_async

    async def ahandle(self, admitted: Admitted, *, request: HttpRequest | None = None) -> Reply:
        """:meth:`handle` for a request :meth:`runs_on_loop` accepts, awaited in the running
        task (the native ASGI path): the same steps, and the same one boundary around user
        code."""
        context = self.context_for(admitted, request=request)
        params = admitted.request.params or {}
        try:
            input_rounds.attach_inputs(TOOLS_CALL, params, context)
            try:
                result = await acall_tool(self, params, context)
            except InputRequired as exc:
                assert context.inputs is not None
                result = input_required_result(exc, context.inputs)
        except Exception as exc:  # the dispatch boundary, as in handle
            return self.failure(admitted, exc, context)
        return Reply(admitted.request.id, result=self.finish_result(result))

    @staticmethod
    def failure(admitted: Admitted, exc: Exception, context: Context) -> Reply:
        """The reply to a request whose handler raised: cancelled, or what the configured
        exception handler makes of ``exc``."""
        if isinstance(exc, RequestCancelled):
            return Reply(admitted.request.id, error=InternalError("Request cancelled"))
        return Reply(admitted.request.id, error=mcp_settings.exception_handler(exc, context))

    def open_listen(self, admitted: Admitted, *, request: HttpRequest | None = None) -> Listener:
        """Validate a ``subscriptions/listen`` request and prepare its stream; the
        transport iterates the listener. Raises :class:`MCPError` (-32602) on a bad filter,
        -32021 for ``taskIds`` without the Tasks extension. The listener keeps the
        request's :class:`Context`: resource updates reach it only for URIs its caller may
        read, task notifications only for the caller's own tasks.
        """
        context = self.context_for(admitted, request=request)
        try:
            wanted = listen_filter(
                self.site, SubscriptionFilter.parse(admitted.request.params or {}), context
            )
        except MCPError:
            raise
        except Exception as exc:  # a database refusal, say: -32603 as for any handler
            raise mcp_settings.exception_handler(exc, context) from exc
        offered = capabilities(self.site)
        supported = {
            "toolsListChanged": "tools" in offered,
            "promptsListChanged": "prompts" in offered,
            "resourcesListChanged": "resources" in offered,
            "resourceSubscriptions": "resources" in offered,
        }
        # Its closing result is a result like any other: it carries serverInfo.
        info = self.server_info() if mcp_settings.INCLUDE_SERVER_INFO else None
        wanted = wanted.honoured(supported)
        listener = Listener(self.site, admitted.request.id, wanted, context, server_info=info)
        listener.follows = partial(may_follow, self.site, context)
        return listener

    def finish_result(self, result: dict[str, Any]) -> dict[str, Any]:
        """Add ``resultType`` and ``_meta[serverInfo]``, which every result carries."""
        result.setdefault("resultType", "complete")
        if mcp_settings.INCLUDE_SERVER_INFO:
            meta = result.setdefault("_meta", {})
            meta.setdefault(SERVER_INFO_KEY, self.server_info())
        return result

    def server_info(self) -> dict[str, Any]:
        """The ``Implementation`` describing this server."""
        info: dict[str, Any] = {
            "name": mcp_settings.SERVER_NAME,
            "version": mcp_settings.server_version,
        }
        if mcp_settings.SERVER_TITLE:
            info["title"] = mcp_settings.SERVER_TITLE
        return info

    def cache_scope(self) -> Literal["public", "private"]:
        """``private`` when lists can differ per caller, else ``public``."""
        return "private" if self.site.varies_by_caller() else "public"
