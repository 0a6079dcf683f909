"""A ``subscriptions/listen`` stream that fails unexpectedly on stdio: answered, logged."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser

from django_mcp.server.dispatch import MCPServer
from django_mcp.stdio.transport import StdioServer
from tests.helpers import mcp_body

LISTEN = {"notifications": {"toolsListChanged": True}}


class LayerDown(Exception):
    """What a channel layer that cannot be reached raises (Redis refusing connections)."""


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("where", "error"),
    [
        ("open_listen", LayerDown),
        ("channel_layer", LayerDown),
        ("open_listen", SystemExit),
        ("channel_layer", SystemExit),
    ],
)
def test_a_listen_stream_that_raises_is_answered_with_32603_and_logged(
    mcp_site: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    where: str,
    error: type[BaseException],
) -> None:
    """basic/index.mdx: every request gets a response (a result or an error) with its id.
    A listen stream whose opening raised something other than an MCPError (its channel
    layer down, a database error reading its caller) ended its thread silently: nothing
    was written or logged, its id was released as though answered, and the client waited
    for ever. It is answered as a request whose handler raises is (-32603, logged); the
    server goes on. So is one that raises ``SystemExit`` (code that calls ``sys.exit()``),
    which ``except Exception`` let end the stream's thread as silently: on a thread of its
    own it stops no process, as in a request worker."""
    server = MCPServer(mcp_site)
    if where == "open_listen":

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise error("the database is down")

        monkeypatch.setattr(server, "open_listen", broken)
    else:

        class Layer:
            async def new_channel(self) -> str:
                raise error("connection refused")

        monkeypatch.setattr("django_mcp.listen.listener.channel_layer", Layer)
    output = io.BytesIO()
    stdio = StdioServer(server, output, user=AnonymousUser())
    with caplog.at_level("ERROR", logger="django_mcp"):
        stdio.serve(
            [
                json.dumps(mcp_body("subscriptions/listen", LISTEN, id=5)).encode(),
                json.dumps(mcp_body("server/discover", {}, id=6)).encode(),
            ]
        )

    answers = {m["id"]: m for m in map(json.loads, output.getvalue().splitlines()) if "id" in m}
    assert answers[5]["error"] == {"code": -32603, "message": "Internal error"}, answers
    assert "result" in answers[6]
    assert error.__name__ in caplog.text
    assert len(stdio.inflight) == 0
