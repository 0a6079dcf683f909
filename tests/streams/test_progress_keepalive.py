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
