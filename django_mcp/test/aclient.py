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

    async def listen(
        self, notifications: Mapping[str, Any] | None = None, **filters: Any
    ) -> AsyncIterator[dict[str, Any]]:
        """Open ``subscriptions/listen`` and yield its messages as they come (the
        acknowledgement first); leaving the ``async for`` closes the stream."""
        outgoing = self.core.listen_request(notifications, **filters)
        response = await self.post(outgoing.body, outgoing.headers)
        raise_unless_stream(response)
        chunks = response.streaming_content  # type: ignore[attr-defined]
        decoder = wire.SSEDecoder()
        try:
            async for chunk in chunks:
                for message in decoder.feed(chunk):
                    yield message
        finally:
            await chunks.aclose()
