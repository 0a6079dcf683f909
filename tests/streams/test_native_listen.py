"""``subscriptions/listen`` through the native ASGI path (``NativeMCP`` under uvicorn).

The same stream code as Django's path (the view's listener, sent by the native app):
basic/patterns/subscriptions.mdx, the acknowledgement first, a change notification carrying
the subscription id, the JSON-RPC response to the listen request when the server ends the
stream (``LISTEN_MAX_SECONDS``, 1 s here), and the subscription gone once the client closes.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from . import remote, sse
from .conftest import UVICORN_LISTEN_MAX_SECONDS
from .remote import STREAMS, call, change, listening

if TYPE_CHECKING:
    from tests.live import LiveServer

pytestmark = pytest.mark.live


def test_a_listen_stream_is_acknowledged_then_receives_a_change(native: LiveServer):
    """The acknowledgement comes first; a ``notify_*`` from a tool called on the same
    server reaches the stream with the listen request's id."""
    with listening(native, {"toolsListChanged": True}, id="native-1") as (ack, reader):
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        response = remote.post(native.url(STREAMS), remote.tool_call("notify_async"))
        assert response.status_code == 200

        assert change(reader, "native-1")["method"] == "notifications/tools/list_changed"


def test_the_server_ends_a_native_stream_with_the_listen_result(native: LiveServer):
    """basic/patterns/subscriptions.mdx: the server "SHOULD first send the JSON-RPC response
    to the listen request, then close"."""
    with listening(native, {"toolsListChanged": True}, id="ending") as (_, reader):
        closing = reader.message(deadline=UVICORN_LISTEN_MAX_SECONDS + 5)
        rest = reader.rest()

    sse.check_message(closing, "subscriptions/listen")
    assert closing["id"] == "ending"
    assert closing["result"]["_meta"][sse.SUBSCRIPTION_ID_KEY] == "ending"
    assert all(frame.is_comment for frame in rest)


def test_closing_a_native_listen_stream_gives_its_subscription_back(native: LiveServer):
    """basic/patterns/subscriptions.mdx: "The client closes the stream to cancel": the native
    app notices the disconnect, cancels the stream and closes the response (its slot)."""
    before = call(native, "listeners")
    with listening(native, {"toolsListChanged": True}):
        assert call(native, "listeners") == before + 1

    deadline = time.monotonic() + 5
    while call(native, "listeners") != before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert call(native, "listeners") == before
