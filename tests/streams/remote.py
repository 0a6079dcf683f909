"""A small HTTP client for the live servers: well-formed MCP POSTs with ``httpx``, plain or
streamed (a fresh connection per stream, closed on exit, so closing it is a disconnect)."""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx

from tests.helpers import mcp_body, mcp_headers, merge_headers, request_meta

from . import sse
from .sse import EventReader

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from tests.live import LiveServer

#: A ceiling, never a wait: a passing test reads its answer in milliseconds. Generous,
#: because a shared 2-core CI machine running other suites beside this one once held a
#: live server's first answer past 5 s.
READ_TIMEOUT = 15.0


def message(
    method: str,
    params: Mapping[str, Any] | None = None,
    *,
    id: Any = 1,
    capabilities: Mapping[str, Any] | None = None,
    **meta: Any,
) -> dict[str, Any]:
    """A request whose ``_meta`` has ``meta`` added (e.g. ``progressToken=...``)."""
    return mcp_body(method, params, id=id, meta=request_meta(capabilities=capabilities, **meta))


def tool_call(name: str, arguments: Mapping[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    return message("tools/call", {"name": name, "arguments": dict(arguments or {})}, **kw)


def listen(notifications: Mapping[str, Any], *, id: Any = "listen-1") -> dict[str, Any]:
    return message("subscriptions/listen", {"notifications": dict(notifications)}, id=id)


def headers_for(
    body: Mapping[str, Any], override: Mapping[str, Any] | None = None
) -> dict[str, str]:
    headers = mcp_headers(body)
    headers["Content-Type"] = "application/json"
    return merge_headers(headers, override)


def post(
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, Any] | None = None,
    *,
    timeout: float | httpx.Timeout = READ_TIMEOUT,
) -> httpx.Response:
    """One request, read to its end."""
    return httpx.post(
        url, content=json.dumps(body), headers=headers_for(body, headers), timeout=timeout
    )


def result(url: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The result of a request answered with plain JSON."""
    response = post(url, body)
    assert response.status_code == 200, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    data: dict[str, Any] = response.json()
    assert "result" in data, data
    return data["result"]  # type: ignore[no-any-return]


@contextmanager
def stream(
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, Any] | None = None,
    *,
    read_timeout: float = READ_TIMEOUT,
) -> Iterator[tuple[httpx.Response, EventReader]]:
    """POST ``body`` and yield the open response with a frame reader; leaving the block
    closes the connection."""
    timeout = httpx.Timeout(READ_TIMEOUT, read=read_timeout)
    with (
        httpx.Client(timeout=timeout) as client,
        client.stream(
            "POST", url, content=json.dumps(body), headers=headers_for(body, headers)
        ) as response,
    ):
        yield response, EventReader(response)


# -- live-server conveniences -------------------------------------------------------------------

STREAMS = "/streams/mcp"


@contextmanager
def listening(
    server: LiveServer,
    notifications: Mapping[str, Any],
    *,
    path: str = STREAMS,
    id: Any = "listen-1",
) -> Iterator[tuple[dict[str, Any], EventReader]]:
    """Open a listen stream; yield its acknowledgement (checked) and the reader."""
    with stream(server.url(path), listen(notifications, id=id)) as (response, reader):
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["x-accel-buffering"] == "no"
        ack = reader.message()
        sse.check_message(ack)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["_meta"][sse.SUBSCRIPTION_ID_KEY] == id
        yield ack, reader


def call(
    server: LiveServer,
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    path: str = STREAMS,
) -> Any:
    """Call a tool on a live server; return its structured result, else its text."""
    answer = result(server.url(path), tool_call(name, arguments))
    assert not answer.get("isError"), answer
    if "structuredContent" not in answer:
        return answer["content"][0]["text"]
    value = answer["structuredContent"]
    return value["result"] if isinstance(value, dict) and set(value) == {"result"} else value


def change(reader: EventReader, subscription_id: Any = "listen-1") -> dict[str, Any]:
    """The next change notification, checked and stamped with the subscription id."""
    message = reader.message()
    sse.check_message(message)
    assert "id" not in message, f"expected a notification, got {message}"
    assert message["params"]["_meta"][sse.SUBSCRIPTION_ID_KEY] == subscription_id
    return message
