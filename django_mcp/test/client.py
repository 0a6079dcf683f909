"""``MCPClient``: Django's test client speaking MCP 2026-07-28, the ``APIClient`` of this app.

Every call is a real POST through the project's middleware and view (admission, dispatch,
rendering and the request log run exactly as in production); the client only builds
conforming requests and reads the replies. Protocol errors raise
:class:`~django_mcp.test.results.MCPClientError`; tool errors come back as results with
``is_error`` set. :class:`~django_mcp.test.aclient.AsyncMCPClient` is the same over
``django.test.AsyncClient``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from django.test import Client
from django.urls import reverse

from django_mcp.test import results as r
from django_mcp.test import wire
from django_mcp.test.core import Answer, ClientCore, Incoming, Operation, Outgoing

if TYPE_CHECKING:
    from django.http import HttpResponseBase

    from django_mcp.sites import MCPSite

T = TypeVar("T")


def endpoint_path(path: str | None, site: MCPSite | None) -> str:
    """``path``, else the URL of ``site`` (``path("mcp", site.urls)``), else the default
    site's ``django_mcp:endpoint`` (``include("django_mcp.urls")``)."""
    if path is not None:
        return path
    if site is not None:
        return reverse(f"{site.name}:endpoint")
    return reverse("django_mcp:endpoint")


def incoming_from(response: HttpResponseBase, body: bytes) -> Incoming:
    """The final message and the notifications of a complete response body."""
    status = response.status_code
    if response.get("Content-Type", "").startswith("text/event-stream"):
        messages = wire.sse_messages(body)
        notes = [m for m in messages if "method" in m and "id" not in m]
        final = next((m for m in reversed(messages) if "method" not in m), None)
        return Incoming(status, final, notes)
    if not body:
        return Incoming(status, None)
    try:
        message = json.loads(body)
    except ValueError:
        return Incoming(status, None)
    return Incoming(status, message if isinstance(message, dict) else None)


class BaseMCPClient:
    """What the sync and async clients share: identity, credentials and the endpoint."""

    def __init__(
        self,
        path: str | None = None,
        *,
        site: MCPSite | None = None,
        protocol_version: str = wire.PROTOCOL_VERSION,
        capabilities: Mapping[str, Any] | None = None,
        client_info: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._path, self._site = path, site
        self.core = ClientCore(
            protocol_version=protocol_version, capabilities=capabilities, client_info=client_info
        )
        self.default_headers: dict[str, str] = dict(headers or {})

    @property
    def path(self) -> str:
        """The endpoint, resolved on first use (so URLconf overrides in a test apply)."""
        return endpoint_path(self._path, self._site)

    def credentials(self, token: str | None = None) -> None:
        """Send ``Authorization: Bearer <token>`` on every request; no token clears it."""
        self.default_headers.pop("Authorization", None)
        if token is not None:
            self.default_headers["Authorization"] = f"Bearer {token}"


class MCPClient(BaseMCPClient):
    """A synchronous MCP client over :class:`django.test.Client`.

    ``call_tool("add", a=1, b=2)`` sends the arguments as keywords; pass a dict as the
    second positional argument for arguments named like an option (``answer``, ``meta``,
    ``headers``). ``answer`` answers input requests: ``{key: response}`` or
    ``(key, request) -> response``.

    Its requests look like a threaded WSGI server's (``wsgi.multithread``), so ``listen``
    follows the WSGI listen settings: a test that listens sets ``LISTEN_WSGI_STREAMS``
    (or uses :class:`AsyncMCPClient`, the ASGI path).
    """

    def __init__(self, path: str | None = None, *, client: Client | None = None, **kw: Any) -> None:
        super().__init__(path, **kw)
        threaded: dict[str, Any] = {"wsgi.multithread": True}
        self.client = client if client is not None else Client(**threaded)

    def force_authenticate(self, user: Any) -> None:
        """Make ``user`` the caller of every following request (None signs out).

        Done with the test client's ``force_login``, so the real authentication
        middleware resolves the user as it would for a signed-in session."""
        if user is None:
            self.client.logout()
        else:
            self.client.force_login(user)

    # -- transport -------------------------------------------------------------------

    def post(
        self,
        body: bytes | str | Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> HttpResponseBase:
        """POST ``body`` verbatim (a mapping is JSON-encoded) with only ``headers`` (and the
        credentials): for malformed-input tests. Returns Django's response."""
        data = json.dumps(body) if isinstance(body, Mapping) else body
        sent = {**self.default_headers, **(headers or {})}
        response: HttpResponseBase = self.client.post(
            self.path, data, content_type="application/json", headers=sent, **kw
        )
        return response

    def exchange(self, outgoing: Outgoing) -> Incoming:
        response = self.post(outgoing.body, outgoing.headers)
        return incoming_from(response, _read_all(response))

    def run(self, operation: Operation[T]) -> T:
        """Drive one operation of the core to its value."""
        outgoing = next(operation)
        while True:
            try:
                outgoing = operation.send(self.exchange(outgoing))
            except StopIteration as stop:
                value: T = stop.value
                return value

    # -- the protocol ------------------------------------------------------------------

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Any request: its ``result``, or raise :class:`MCPClientError`."""
        result, _ = self.run(self.core.request(method, params, meta=meta, headers=headers))
        return result

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> HttpResponseBase:
        """Send a notification (no id); the response is expected to be 202."""
        outgoing = self.core.outgoing(method, params, notification=True)
        return self.post(outgoing.body, outgoing.headers)

    def discover(self) -> r.DiscoverResult:
        return self.run(self.core.discover())

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool definition, following cursors."""
        return self.run(self.core.list_all("tools/list", "tools"))

    def list_resources(self) -> list[dict[str, Any]]:
        return self.run(self.core.list_all("resources/list", "resources"))

    def list_resource_templates(self) -> list[dict[str, Any]]:
        return self.run(self.core.list_all("resources/templates/list", "resourceTemplates"))

    def list_prompts(self) -> list[dict[str, Any]]:
        return self.run(self.core.list_all("prompts/list", "prompts"))

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        answer: Answer | None = None,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        **kw_arguments: Any,
    ) -> r.ToolCallResult:
        """``tools/call``; ``meta`` adds ``_meta`` keys (``{"progressToken": 1}``)."""
        args = {**(arguments or {}), **kw_arguments}
        return self.run(self.core.call_tool(name, args, answer=answer, meta=meta, headers=headers))

    def read_resource(
        self, uri: str, *, answer: Answer | None = None, meta: Mapping[str, Any] | None = None
    ) -> r.ReadResourceResult:
        return self.run(self.core.read_resource(uri, answer=answer, meta=meta))

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        /,
        *,
        answer: Answer | None = None,
        meta: Mapping[str, Any] | None = None,
        **kw_arguments: Any,
    ) -> r.PromptResult:
        args = {**(arguments or {}), **kw_arguments}
        return self.run(self.core.get_prompt(name, args, answer=answer, meta=meta))

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> r.CompletionResult:
        """``completion/complete``; ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``."""
        return self.run(self.core.complete(ref, argument, value, context))

    def listen(
        self, notifications: Mapping[str, Any] | None = None, **filters: Any
    ) -> ListenStream:
        """Open ``subscriptions/listen`` (``listen(toolsListChanged=True)``) and return
        the stream: iterate it for messages (the acknowledgement first), close it to
        cancel. A refused filter raises :class:`MCPClientError` before any stream."""
        wanted = {**(notifications or {}), **filters}
        outgoing = self.core.outgoing("subscriptions/listen", {"notifications": wanted})
        response = self.post(outgoing.body, outgoing.headers)
        if not response.get("Content-Type", "").startswith("text/event-stream"):
            incoming = incoming_from(response, response.content)  # type: ignore[attr-defined]
            raise _error_of(incoming)
        return ListenStream(response)


def _read_all(response: HttpResponseBase) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)  # type: ignore[attr-defined]
    body: bytes = response.content  # type: ignore[attr-defined]
    return body


def _error_of(incoming: Incoming) -> r.MCPClientError:
    if incoming.message is not None and "error" in incoming.message:
        return r.MCPClientError.from_response(incoming.message, incoming.status)
    return r.MCPClientError(0, f"no stream (HTTP {incoming.status})", None, incoming.status)


class ListenStream:
    """The messages of one open ``subscriptions/listen`` stream, read as they come.

    Keep-alive comments are skipped. Use it as a context manager, or call :meth:`close`:
    closing the stream is how a client cancels a subscription."""

    def __init__(self, response: HttpResponseBase) -> None:
        self.response = response
        self._chunks = iter(response.streaming_content)  # type: ignore[attr-defined]
        self._messages = self._read()

    def _read(self) -> Iterator[dict[str, Any]]:
        decoder = wire.SSEDecoder()
        for chunk in self._chunks:
            yield from decoder.feed(chunk)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        return next(self._messages)

    def close(self) -> None:
        """End the stream as a disconnecting client would.

        Django's test client wraps a streamed body in a generator that closes the response
        when it ends, with the database-connection cleanup of ``request_finished`` held off
        (as during any test request); closing that generator (the response's iterator)
        goes through the same path. Closing the response directly would run the cleanup
        and touch the database."""
        iterator = getattr(self.response, "_iterator", None)
        if iterator is not None and hasattr(iterator, "close"):
            iterator.close()
        else:
            self.response.close()

    def __enter__(self) -> ListenStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
