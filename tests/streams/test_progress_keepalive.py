"""Keep-alive comments on a live progress stream whose handler is quiet.

basic/transports/streamable-http.mdx: an SSE stream may carry what the server writes
between events, and SSE comment lines (``: ...``) are ignored by clients (the HTML
Living Standard's event stream format). A proxy in front of the server (nginx's
``proxy_read_timeout``, 60 s by default) cuts a response that writes nothing for longer
than its idle timeout: before keep-alives, a tool quiet for that long after its first
progress report lost its stream, and its reply with it. Listen streams already sent
``: keep-alive`` after ``LISTEN_KEEPALIVE_SECONDS``; progress streams now do too.

Driven in-process through Django's ASGI handler and through ``NativeMCP``, as
``test_live_stream_limit`` drives them. Nothing is timed: the tool waits until the test has
seen a keep-alive go out (or, without them, until the hang guard).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from django_mcp.http import streaming
from django_mcp.protocol import sse as wire
from django_mcp.server.context import Context
from django_mcp.sites import MCPSite
from tests.helpers import override_mcp

from . import sse
from .test_live_stream_limit import APPS, HANG_GUARD_SECONDS, Client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def kept_alive() -> threading.Event:
    return threading.Event()


@pytest.fixture
def quiet_site(mcp_site: MCPSite, kept_alive: threading.Event) -> MCPSite:
    @mcp_site.tool
    def quiet(ctx: Context) -> str:
        """Report progress, stay quiet until a keep-alive went out, report again."""
        ctx.report_progress(1, total=2)
        kept_alive.wait(HANG_GUARD_SECONDS)
        ctx.report_progress(2, total=2)
        return "done"

    return mcp_site


class Watching(Client):
    """A client that notes when a keep-alive comment reaches it."""

    def __init__(self, seen: threading.Event) -> None:
        super().__init__("quiet")
        self.seen = seen

    async def send(self, message: dict[str, Any]) -> None:
        await super().send(message)
        if message["type"] == "http.response.body" and wire.KEEP_ALIVE in message.get("body", b""):
            self.seen.set()


@pytest.mark.parametrize("app_name", sorted(APPS))
def test_a_quiet_handler_s_stream_gets_keep_alives_and_then_its_reply(
    app_name: str, quiet_site: MCPSite, kept_alive: threading.Event
):
    client = Watching(kept_alive)
    with override_mcp(LISTEN_KEEPALIVE_SECONDS=0.05):
        asyncio.run(client.call(APPS[app_name]()))

    assert kept_alive.is_set(), "no keep-alive while the handler was quiet"
    assert client.content_type == sse.CONTENT_TYPE
    body = b"".join(m.get("body", b"") for m in client.messages if m["type"].endswith("body"))
    assert body.index(wire.KEEP_ALIVE) > body.index(b'"progress":1')
    *notes, reply = client.answer()  # the comments are not messages
    assert [note["params"]["progress"] for note in notes] == [1, 2]
    assert reply["result"]["content"][0]["text"] == "done"


class FakeContext:
    cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


def test_a_disconnect_in_the_turn_an_item_arrives_still_cancels_the_handler():
    """basic/patterns/cancellation.mdx: over HTTP a disconnect is the cancellation. The
    stream's task is cancelled in the same loop turn that an item reaches its queue: on
    Python 3.11 ``asyncio.wait_for`` returned the item and dropped the cancellation, so
    the stream went on writing to nobody and the handler was never cancelled (a hostile
    review's finding). The keep-alive wait now uses ``asyncio.timeout``."""
    stream = streaming.LiveStream(None, None, None, caller="-")  # type: ignore[arg-type]  # no thread
    stream.first_item = {"method": "notifications/progress", "params": {"progress": 1}}
    stream.first.set()
    context = FakeContext()
    stream.context = context  # type: ignore[assignment]
    seen: list[bytes] = []

    async def consume() -> None:
        async for part in stream.events():
            seen.append(part)

    async def scenario() -> bool:
        task = asyncio.ensure_future(consume())
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(seen) == 1
        assert stream._queue is not None
        stream._queue.put_nowait({"method": "notifications/progress", "params": {"progress": 2}})
        task.cancel()  # the client went away, in the same turn
        for _ in range(5):
            await asyncio.sleep(0)
        ended = task.done()
        if not ended:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        return ended

    with override_mcp(LISTEN_KEEPALIVE_SECONDS=30):
        assert asyncio.run(scenario()), "the stream went on after its task was cancelled"
    assert context.cancelled, "the handler was not cancelled on disconnect"
