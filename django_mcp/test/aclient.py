"""``AsyncMCPClient``: :class:`~django_mcp.test.client.MCPClient` over
``django.test.AsyncClient``, for async tests (the request runs through the ASGI handler,
so streamed replies take the live-stream path, as under Daphne or uvicorn)."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from django.test import AsyncClient

from django_mcp.test import wire
from django_mcp.test.client import BaseMCPClient, incoming_from, raise_unless_stream
from django_mcp.test.core import ClientCore, Done, Incoming, Operation, Outgoing, step

if TYPE_CHECKING:
    from django.http import HttpResponseBase

T = TypeVar("T")
P = ParamSpec("P")


def _awaited(
    operation: Callable[Concatenate[ClientCore, P], Operation[T]],
) -> Callable[Concatenate[AsyncMCPClient, P], Coroutine[Any, Any, T]]:
    """The :class:`AsyncMCPClient` coroutine method that runs ``operation`` of the core,
    with its signature and docstring."""

    @functools.wraps(operation)
    async def method(self: AsyncMCPClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.run(operation(self.core, *args, **kwargs))

    return method


class AsyncMCPClient(BaseMCPClient):
    """The async twin of :class:`~django_mcp.test.client.MCPClient`: same methods,
    awaited."""

    def __init__(
        self, path: str | None = None, *, client: AsyncClient | None = None, **kw: Any
    ) -> None:
        super().__init__(path, **kw)
        self.client = client if client is not None else AsyncClient()

    async def force_authenticate(self, user: Any) -> None:
        """Make ``user`` the caller of every following request (None signs out)."""
        if user is None:
            await self.client.alogout()
        else:
            await self.client.aforce_login(user)

    async def post(
        self,
        body: bytes | str | Mapping[str, Any],
        headers: Mapping[str, str] | None = None,
        **kw: Any,
    ) -> HttpResponseBase:
        """POST ``body`` verbatim (a mapping is JSON-encoded): for malformed input."""
        response: HttpResponseBase = await self.client.post(
            **self.post_arguments(body, headers), **kw
        )
        return response

    async def notify(
        self, method: str, params: Mapping[str, Any] | None = None
    ) -> HttpResponseBase:
        """Send a notification (no id); the response is expected to be 202."""
        outgoing = self.core.outgoing(method, params, notification=True)
        return await self.post(outgoing.body, outgoing.headers)

    async def exchange(self, outgoing: Outgoing) -> Incoming:
        response = await self.post(outgoing.body, outgoing.headers)
        if response.streaming:
            chunks = [chunk async for chunk in response.streaming_content]  # type: ignore[attr-defined]
            body = b"".join(chunks)
        else:
            body = response.content  # type: ignore[attr-defined]
        return incoming_from(response, body)

    async def run(self, operation: Operation[T]) -> T:
        """Drive one operation of the core to its value."""
        state = step(operation)
        while not isinstance(state, Done):
            state = step(operation, await self.exchange(state))
        return state.value

    # -- the protocol (its rules are in the core) ---------------------------------------

    request = _awaited(ClientCore.request)
    discover = _awaited(ClientCore.discover)
    list_tools = _awaited(ClientCore.list_tools)
    list_resources = _awaited(ClientCore.list_resources)
    list_resource_templates = _awaited(ClientCore.list_resource_templates)
    list_prompts = _awaited(ClientCore.list_prompts)
    call_tool = _awaited(ClientCore.call_tool)
    read_resource = _awaited(ClientCore.read_resource)
    get_prompt = _awaited(ClientCore.get_prompt)
    complete = _awaited(ClientCore.complete)

    def listen(
        self, notifications: Mapping[str, Any] | None = None, **filters: Any
    ) -> AsyncListenStream:
        """``subscriptions/listen``: the stream, opened by ``async with`` (or the first
        ``async for``), whose messages come as they are sent (the acknowledgement first);
        leaving the ``async with`` (or ``await stream.aclose()``) ends it. A refused filter
        raises :class:`MCPClientError` when the stream is opened."""
        return AsyncListenStream(self, self.core.listen_request(notifications, **filters))


class AsyncListenStream:
    """The messages of one ``subscriptions/listen`` stream of :class:`AsyncMCPClient`.

    An object of its own, not an async generator: leaving ``async for`` early does not
    close an async generator (the event loop does, some time after it is collected), and
    the server's stream, with its place in the listen limits, would live on until then.
    ``async with`` closes it when the block ends. Keep-alive comments are skipped."""

    def __init__(self, client: AsyncMCPClient, outgoing: Outgoing) -> None:
        self.client, self.outgoing = client, outgoing
        self.response: HttpResponseBase | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._decoder = wire.SSEDecoder()
        self._pending: list[dict[str, Any]] = []

    async def open(self) -> None:
        """Send the request (once); raise :class:`MCPClientError` for a refusal, each time
        the stream is opened or read again after it."""
        if self.response is None:
            self.response = await self.client.post(self.outgoing.body, self.outgoing.headers)
            if self.response.streaming:
                self._chunks = self.response.streaming_content.__aiter__()  # type: ignore[attr-defined]
        raise_unless_stream(self.response)

    def __aiter__(self) -> AsyncListenStream:
        return self

    async def __anext__(self) -> dict[str, Any]:
        await self.open()
        while not self._pending:
            if self._chunks is None:
                raise StopAsyncIteration
            self._pending.extend(self._decoder.feed(await self._chunks.__anext__()))
        return self._pending.pop(0)

    async def aclose(self) -> None:
        """End the stream as a disconnecting client would: the wrapper Django's test client
        puts around the body, then the response's own iterator under it (closing only the
        wrapper would leave the server's stream open)."""
        chunks, self._chunks = self._chunks, None
        if chunks is not None and hasattr(chunks, "aclose"):
            await chunks.aclose()
        iterator = getattr(self.response, "_iterator", None)
        if iterator is not None and hasattr(iterator, "aclose"):
            await iterator.aclose()

    async def __aenter__(self) -> AsyncListenStream:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
