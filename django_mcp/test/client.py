"""``MCPClient``: Django's test client speaking MCP 2026-07-28, the ``APIClient`` of this app.

Every call is a real POST through the project's middleware and view (admission, dispatch,
rendering and the request log run exactly as in production); the client only builds
conforming requests and reads the replies. Protocol errors raise
:class:`~django_mcp.test.results.MCPClientError`; tool errors come back as results with
``is_error`` set. :class:`~django_mcp.test.aclient.AsyncMCPClient` is the same over
``django.test.AsyncClient``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from django.test import Client
from django.urls import reverse

from django_mcp.test import wire
from django_mcp.test.core import (
    ClientCore,
    Done,
    Incoming,
    Operation,
    Outgoing,
    listen_refused,
    step,
)

if TYPE_CHECKING:
    from django.http import HttpResponseBase

    from django_mcp.sites import MCPSite

T = TypeVar("T")
P = ParamSpec("P")


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

    def post_arguments(
        self, body: bytes | str | Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> dict[str, Any]:
        """The test client's ``post`` arguments for ``body`` (a mapping is JSON-encoded)
        with the credentials and ``headers``."""
        data = json.dumps(body) if isinstance(body, Mapping) else body
        sent = {**self.default_headers, **(headers or {})}
        return {
            "path": self.path,
            "data": data,
            "content_type": "application/json",
            "headers": sent,
        }


def raise_unless_stream(response: HttpResponseBase) -> None:
    """Raise the error of a ``subscriptions/listen`` answered without a stream."""
    if not response.get("Content-Type", "").startswith("text/event-stream"):
        raise listen_refused(incoming_from(response, response.content))  # type: ignore[attr-defined]


def _blocking(
    operation: Callable[Concatenate[ClientCore, P], Operation[T]],
) -> Callable[Concatenate[MCPClient, P], T]:
    """The :class:`MCPClient` method that runs ``operation`` of the core, with its
    signature and docstring."""

    @functools.wraps(operation)
    def method(self: MCPClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.run(operation(self.core, *args, **kwargs))

    return method


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
        response: HttpResponseBase = self.client.post(**self.post_arguments(body, headers), **kw)
        return response

    def exchange(self, outgoing: Outgoing) -> Incoming:
        response = self.post(outgoing.body, outgoing.headers)
        return incoming_from(response, _read_all(response))

    def run(self, operation: Operation[T]) -> T:
        """Drive one operation of the core to its value."""
        state = step(operation)
        while not isinstance(state, Done):
            state = step(operation, self.exchange(state))
        return state.value

    # -- the protocol (its rules are in the core) ---------------------------------------

    request = _blocking(ClientCore.request)
    discover = _blocking(ClientCore.discover)
    list_tools = _blocking(ClientCore.list_tools)
    list_resources = _blocking(ClientCore.list_resources)
    list_resource_templates = _blocking(ClientCore.list_resource_templates)
    list_prompts = _blocking(ClientCore.list_prompts)
    call_tool = _blocking(ClientCore.call_tool)
    read_resource = _blocking(ClientCore.read_resource)
    get_prompt = _blocking(ClientCore.get_prompt)
    complete = _blocking(ClientCore.complete)

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> HttpResponseBase:
        """Send a notification (no id); the response is expected to be 202."""
        outgoing = self.core.outgoing(method, params, notification=True)
        return self.post(outgoing.body, outgoing.headers)

    def listen(
        self, notifications: Mapping[str, Any] | None = None, **filters: Any
    ) -> ListenStream:
        """Open ``subscriptions/listen`` (``listen(toolsListChanged=True)``) and return
        the stream: iterate it for messages (the acknowledgement first), close it to
        cancel. A refused filter raises :class:`MCPClientError` before any stream."""
        outgoing = self.core.listen_request(notifications, **filters)
        response = self.post(outgoing.body, outgoing.headers)
        raise_unless_stream(response)
        return ListenStream(response)


def _read_all(response: HttpResponseBase) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)  # type: ignore[attr-defined]
    body: bytes = response.content  # type: ignore[attr-defined]
    return body


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
