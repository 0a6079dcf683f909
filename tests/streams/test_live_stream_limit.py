"""``MAX_LIVE_STREAMS``: the handler threads of live progress streams are bounded, and a
request past the bound is answered buffered, never refused.

basic/patterns/progress.mdx: a receiver MAY send progress notifications; over HTTP they go
on that request's own SSE response stream, before the final response
(basic/transports/streamable-http.mdx). Sending them late, all at once, is within the
spec; refusing or failing the request because of them is not. So with ``N`` threads
running, request ``N + 1`` runs in the thread serving its view, as under WSGI: the same
notifications, in the same order, then its reply, on one stream.

Every test runs through Django's ASGI handler and through ``NativeMCP``, in-process,
driving the ASGI application by hand (so that a test can disconnect mid-stream). Nothing
here is timed: the tools meet the test at barriers and events, and the handler threads are
joined before their slots are counted.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from django.core.asgi import get_asgi_application

from django_mcp.exceptions import RequestCancelled
from django_mcp.http import live_slots, streaming
from django_mcp.http.asgi import BodyLimit
from django_mcp.http.native import NativeMCP
from django_mcp.server.context import Context
from tests.helpers import mcp_asgi_scope, mcp_body, override_mcp, request_meta

from . import sse

if TYPE_CHECKING:
    from collections.abc import Callable

    from django_mcp.sites import MCPSite

APPS: dict[str, Callable[[], Any]] = {
    "django": lambda: BodyLimit(get_asgi_application()),
    "native": lambda: NativeMCP(get_asgi_application()),
}
#: Only against a hang: nothing waits longer than this for what must happen.
HANG_GUARD_SECONDS = 30
LIMIT = 2

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Tools:
    """What the tools tell the test, and the events the test lets them go on with."""

    arrived: threading.Barrier = field(default_factory=lambda: threading.Barrier(LIMIT + 1))
    release: threading.Event = field(default_factory=threading.Event)
    threads: dict[str, str] = field(default_factory=dict)  # call name -> thread name
    counted: dict[str, int] = field(default_factory=dict)  # call name -> live_streams()
    record: list[str] = field(default_factory=list)


@pytest.fixture
def tools(mcp_site: MCPSite) -> Tools:
    seen = Tools()

    @mcp_site.tool
    def hold(ctx: Context, name: str, wait: bool = True) -> str:
        """Report progress, wait at the barrier and for the release if ``wait``, report
        again, answer ``name``."""
        ctx.report_progress(1, total=2)
        seen.threads[name] = threading.current_thread().name
        seen.counted[name] = streaming.live_streams()
        if wait:
            seen.arrived.wait(HANG_GUARD_SECONDS)
            seen.release.wait(HANG_GUARD_SECONDS)
        ctx.report_progress(2, total=2)
        return name

    @mcp_site.tool
    def until_cancelled(ctx: Context) -> str:
        """Report progress, wait for the release, report again (cancelled by then)."""
        ctx.report_progress(1, total=2)
        seen.release.wait(HANG_GUARD_SECONDS)
        try:
            ctx.report_progress(2, total=2)
        except RequestCancelled:
            seen.record.append("cancelled")
            raise
        seen.record.append("finished")
        return "finished"

    @mcp_site.tool
    def fail_midway(ctx: Context) -> str:
        """Report progress, then fail with an unexpected exception."""
        ctx.report_progress(1)
        raise RuntimeError("midway")

    return seen


@pytest.fixture(params=sorted(APPS))
def app(request: pytest.FixtureRequest, tools: Tools) -> Any:
    with override_mcp(MAX_LIVE_STREAMS=LIMIT):
        yield APPS[request.param]()


class Client:
    """One MCP POST to an ASGI application, driven by hand. ``gone`` set: the client
    disconnects (what the server's ``receive`` then reports)."""

    def __init__(self, tool: str, **arguments: Any) -> None:
        body = mcp_body(
            "tools/call",
            {"name": tool, "arguments": arguments},
            meta=request_meta(progressToken=f"p-{arguments.get('name', tool)}"),
        )
        self.body = json.dumps(body).encode()
        self.scope = mcp_asgi_scope(body, len(self.body))
        self.messages: list[dict[str, Any]] = []
        self.gone = asyncio.Event()
        self.first_part = asyncio.Event()
        self._body_read = False

    async def receive(self) -> dict[str, Any]:
        if not self._body_read:
            self._body_read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        if message["type"] == "http.response.body":
            if message.get("body"):
                self.first_part.set()
            if not message.get("more_body", False):
                self.gone.set()  # the answer is complete: the client leaves

    async def call(self, app: Any) -> None:
        await asyncio.wait_for(app(self.scope, self.receive, self.send), HANG_GUARD_SECONDS)

    @property
    def content_type(self) -> str:
        start = next(m for m in self.messages if m["type"] == "http.response.start")
        headers = {bytes(k).lower(): bytes(v) for k, v in start["headers"]}
        return headers[b"content-type"].decode()

    def answer(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages received: the SSE stream's, or the one JSON response."""
        body = b"".join(m.get("body", b"") for m in self.messages if m["type"].endswith("body"))
        if self.content_type.startswith(sse.CONTENT_TYPE):
            return sse.messages(body)
        return [json.loads(body)]


def join_stream_threads() -> None:
    """Wait for every live stream's handler thread to end (each gives back its slot
    last thing)."""
    for thread in threading.enumerate():
        if thread.name == "mcp-stream":
            thread.join(HANG_GUARD_SECONDS)
            assert not thread.is_alive(), "a live stream's thread did not end"


def assert_held_stream(messages: list[dict[str, Any]], name: str) -> None:
    """Progress 1 and 2 with the call's own token, then the reply ``name``, in that order."""
    *notes, reply = messages
    for note in notes:
        sse.check_message(note)
    assert [n["params"]["progress"] for n in notes] == [1, 2]
    assert {n["params"]["progressToken"] for n in notes} == {f"p-{name}"}
    assert reply["result"]["content"][0]["text"] == name


def test_one_stream_over_the_limit_is_answered_buffered_not_refused(app: Any, tools: Tools):
    """With ``MAX_LIVE_STREAMS = N`` and N streams live, call N + 1 runs in its view's
    thread, not a new one, and gets the same SSE messages, progress before the reply
    (basic/patterns/progress.mdx: progress MAY be sent, so sending it late is allowed); the
    N live ones are answered in full, and every slot is back once they end."""
    held = [Client("hold", name=f"held-{i}") for i in range(LIMIT)]

    async def scenario() -> Client:
        calls = [asyncio.ensure_future(client.call(app)) for client in held]
        loop = asyncio.get_running_loop()
        try:
            # Every held call is running in a live stream's thread now.
            await loop.run_in_executor(None, tools.arrived.wait, HANG_GUARD_SECONDS)
            extra = Client("hold", name="extra", wait=False)
            await extra.call(app)
        finally:
            tools.release.set()
        await asyncio.gather(*calls)
        return extra

    extra = asyncio.run(scenario())

    assert extra.content_type == sse.CONTENT_TYPE
    assert_held_stream(extra.answer(), "extra")
    assert tools.threads["extra"] != "mcp-stream"  # buffered in the view's thread
    assert tools.counted["extra"] == LIMIT  # no thread over the limit
    for i, client in enumerate(held):
        assert client.content_type == sse.CONTENT_TYPE
        assert_held_stream(client.answer(), f"held-{i}")
        assert tools.threads[f"held-{i}"] == "mcp-stream"
    join_stream_threads()
    assert streaming.live_streams() == 0


def test_a_disconnect_gives_the_slot_back(app: Any, tools: Tools):
    """basic/patterns/cancellation.mdx: closing the stream cancels the request; the handler
    stops at its next progress report and its thread ends, giving back its slot."""
    client = Client("until_cancelled")

    async def scenario() -> None:
        call = asyncio.ensure_future(client.call(app))
        await asyncio.wait_for(client.first_part.wait(), HANG_GUARD_SECONDS)
        client.gone.set()
        await call

    asyncio.run(scenario())
    tools.release.set()
    join_stream_threads()

    assert tools.record == ["cancelled"]
    assert streaming.live_streams() == 0


def test_a_failing_handler_gives_the_slot_back(app: Any, tools: Tools):
    """A tool that fails after its first progress: the stream ends with -32603
    (basic/index.mdx, JSON-RPC errors) and the thread's slot is given back."""
    client = Client("fail_midway")

    asyncio.run(client.call(app))
    join_stream_threads()

    *notes, reply = client.answer()
    assert [n["method"] for n in notes] == ["notifications/progress"]
    assert reply["error"]["code"] == -32603
    assert streaming.live_streams() == 0


def test_a_handler_thread_that_dies_gives_the_slot_back(
    app: Any, tools: Tools, monkeypatch: pytest.MonkeyPatch
):
    """A bug below the tool (``MCPServer.handle`` raising in the stream's thread): the
    client still gets -32603, and the slot is given back."""
    from django_mcp.server.dispatch import MCPServer

    def broken(self: MCPServer, admitted: Any, **kwargs: Any) -> Any:
        kwargs["emit"]({"method": "notifications/progress", "params": {"progressToken": "p"}})
        raise RuntimeError("a bug")

    died: list[type[BaseException] | None] = []
    monkeypatch.setattr(MCPServer, "handle", broken)
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_type))
    client = Client("hold", name="x")

    asyncio.run(client.call(app))
    join_stream_threads()

    assert client.answer()[-1]["error"]["code"] == -32603
    assert died == [RuntimeError]
    assert streaming.live_streams() == 0


def test_without_a_thread_to_start_the_request_is_answered_buffered(
    app: Any, tools: Tools, monkeypatch: pytest.MonkeyPatch
):
    """A system that gives no more threads (``RuntimeError: can't start new thread``) is
    treated as the limit reached: the request is answered buffered, its slot not kept."""
    start = threading.Thread.start

    def refuse(self: threading.Thread) -> None:
        if self.name == "mcp-stream":
            raise RuntimeError("can't start new thread")
        start(self)

    monkeypatch.setattr(threading.Thread, "start", refuse)
    client = Client("hold", name="lone", wait=False)

    asyncio.run(client.call(app))

    assert_held_stream(client.answer(), "lone")
    assert tools.threads["lone"] != "mcp-stream"
    assert streaming.live_streams() == 0


@pytest.mark.parametrize("limit", [0, "64", -1])
def test_zero_means_always_buffered_and_an_invalid_limit_the_default(
    tools: Tools, mcp_site: MCPSite, limit: Any
):
    """``0`` streams nothing live; a value the checks refuse (E004) is read as the default
    (64), never as no limit."""
    with override_mcp(MAX_LIVE_STREAMS=limit):
        assert streaming.max_live_streams() == (0 if limit == 0 else 64)
        client = Client("hold", name="only", wait=False)
        asyncio.run(client.call(NativeMCP(get_asgi_application())))
    assert_held_stream(client.answer(), "only")
    assert (tools.threads["only"] == "mcp-stream") is (limit != 0)
    join_stream_threads()
    assert streaming.live_streams() == 0


def test_an_abandoned_stream_gives_the_slot_back():
    """The response dropped before its stream started (the client left while the view
    waited: basic/patterns/cancellation.mdx, a disconnect is cancellation): ``abandoned``
    cancels the handler, whose thread then ends and gives back its slot."""
    from django_mcp.server.dispatch import Reply

    cancelled = threading.Event()

    class Handle:
        def cancel(self) -> None:
            cancelled.set()

    class Server:
        def handle(self, admitted: Any, *, request: Any, emit: Any, on_context: Any) -> Reply:
            on_context(Handle())
            emit({"method": "notifications/progress", "params": {"progressToken": "a"}})
            cancelled.wait(HANG_GUARD_SECONDS)
            return Reply(1, result={})

    stream = streaming.LiveStream(Server(), None, None, caller="ip:192.0.2.1")  # type: ignore[arg-type]
    streaming._start_stream_end_thread()  # as respond_streaming does before abandoning
    with override_mcp(MAX_LIVE_STREAMS=1):
        assert stream.start()
        assert stream.first_message()["method"] == "notifications/progress"
        assert streaming.live_streams() == 1
        stream.abandoned()
    join_stream_threads()

    assert cancelled.is_set()
    assert streaming.live_streams() == 0


def from_address(client: Client, address: str) -> Client:
    """``client``'s call as an anonymous caller at ``address`` (counted by address)."""
    client.scope["client"] = (address, 40000)
    return client


def test_one_callers_share_is_bounded_and_leaves_others_live(app: Any, tools: Tools):
    """``MAX_LIVE_STREAMS_PER_CALLER``: one caller's slow streamed calls took every thread,
    and every other caller's progress then came buffered. With a share of 1, a caller's
    second call while its first is live is answered buffered (its own notifications, in
    order, before its reply: basic/patterns/progress.mdx, progress MAY be sent), while
    another caller's call still gets a thread of its own."""
    held = [
        from_address(Client("hold", name="held-0"), "10.0.0.1"),
        from_address(Client("hold", name="held-1"), "10.0.0.2"),
    ]

    async def scenario() -> tuple[Client, Client]:
        calls = [asyncio.ensure_future(client.call(app)) for client in held]
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, tools.arrived.wait, HANG_GUARD_SECONDS)
            same = from_address(Client("hold", name="same", wait=False), "10.0.0.1")
            await same.call(app)
            other = from_address(Client("hold", name="other", wait=False), "10.0.0.3")
            await other.call(app)
        finally:
            tools.release.set()
        await asyncio.gather(*calls)
        return same, other

    with override_mcp(MAX_LIVE_STREAMS=LIMIT + 2, MAX_LIVE_STREAMS_PER_CALLER=1):
        same, other = asyncio.run(scenario())
    join_stream_threads()

    assert tools.threads["same"] != "mcp-stream"  # its caller's one live stream is taken
    assert_held_stream(same.answer(), "same")
    assert tools.threads["other"] == "mcp-stream"  # another caller is not held back
    assert_held_stream(other.answer(), "other")
    assert streaming.live_streams() == 0


@pytest.mark.parametrize("value", [0, -1, "8", None, True])
def test_a_share_the_checks_refuse_means_the_default(value: Any):
    """A process that never ran the checks (E004 refuses these) keeps the default share."""
    with override_mcp(MAX_LIVE_STREAMS_PER_CALLER=value):
        assert live_slots.max_live_streams_per_caller() == 8
