"""``AsyncMCPClient``: :class:`~django_mcp.test.client.MCPClient` over
``django.test.AsyncClient``, for async tests (the request runs through the ASGI handler,
so streamed replies take the live-stream path, as under Daphne or uvicorn)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from django.test import AsyncClient

from django_mcp.test import results as r
from django_mcp.test import wire
from django_mcp.test.client import BaseMCPClient, _error_of, incoming_from
from django_mcp.test.core import Answer, Incoming, Operation, Outgoing

if TYPE_CHECKING:
    from django.http import HttpResponseBase

T = TypeVar("T")


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
        data = json.dumps(body) if isinstance(body, Mapping) else body
        sent = {**self.default_headers, **(headers or {})}
        response: HttpResponseBase = await self.client.post(
            self.path, data, content_type="application/json", headers=sent, **kw
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
        outgoing = next(operation)
        while True:
            incoming = await self.exchange(outgoing)
            try:
                outgoing = operation.send(incoming)
            except StopIteration as stop:
                value: T = stop.value
                return value

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        result, _ = await self.run(self.core.request(method, params, meta=meta, headers=headers))
        return result

    async def discover(self) -> r.DiscoverResult:
        return await self.run(self.core.discover())

    async def list_tools(self) -> list[dict[str, Any]]:
        return await self.run(self.core.list_all("tools/list", "tools"))

    async def list_resources(self) -> list[dict[str, Any]]:
        return await self.run(self.core.list_all("resources/list", "resources"))

    async def list_prompts(self) -> list[dict[str, Any]]:
        return await self.run(self.core.list_all("prompts/list", "prompts"))

    async def call_tool(
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
        args = {**(arguments or {}), **kw_arguments}
        return await self.run(
            self.core.call_tool(name, args, answer=answer, meta=meta, headers=headers)
        )

    async def read_resource(
        self, uri: str, *, answer: Answer | None = None, meta: Mapping[str, Any] | None = None
    ) -> r.ReadResourceResult:
        return await self.run(self.core.read_resource(uri, answer=answer, meta=meta))

    async def get_prompt(
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
        return await self.run(self.core.get_prompt(name, args, answer=answer, meta=meta))

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> r.CompletionResult:
        return await self.run(self.core.complete(ref, argument, value, context))

    async def listen(
        self, notifications: Mapping[str, Any] | None = None, **filters: Any
    ) -> AsyncIterator[dict[str, Any]]:
        """Open ``subscriptions/listen`` and yield its messages as they come (the
        acknowledgement first); leaving the ``async for`` closes the stream."""
        wanted = {**(notifications or {}), **filters}
        outgoing = self.core.outgoing("subscriptions/listen", {"notifications": wanted})
        response = await self.post(outgoing.body, outgoing.headers)
        if not response.get("Content-Type", "").startswith("text/event-stream"):
            raise _error_of(incoming_from(response, response.content))  # type: ignore[attr-defined]
        chunks = response.streaming_content  # type: ignore[attr-defined]
        decoder = wire.SSEDecoder()
        try:
            async for chunk in chunks:
                for message in decoder.feed(chunk):
                    yield message
        finally:
            await chunks.aclose()
