"""A request's notifications on stdio end with its response (basic/patterns/progress.mdx)."""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser

from django_mcp import Context
from django_mcp.server.dispatch import MCPServer
from django_mcp.stdio.transport import StdioServer
from tests.helpers import mcp_body, request_meta


class WatchedOutput(io.BytesIO):
    """stdout, which tells when a response (a line with a ``result``) was written."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = threading.Event()

    def write(self, data: Any) -> int:
        written = super().write(data)
        if b'"result"' in bytes(data):
            self.answered.set()
        return written


@pytest.mark.django_db(transaction=True)
def test_no_notification_of_a_request_is_written_after_its_response(mcp_site: Any) -> None:
    """basic/patterns/progress.mdx: progress notifications MUST only reference tokens of
    an active request (and stop once it completes). A tool may leave a thread behind that
    still holds its Context; over HTTP what that thread reports after the response goes
    nowhere (the request's stream has ended), but stdio wrote it as a line after the
    response, a notification for a request the client had done with."""
    output = WatchedOutput()
    reported = threading.Event()

    @mcp_site.tool
    def leaves_a_reporter(ctx: Context) -> str:
        def later() -> None:
            output.answered.wait(10)
            ctx.report_progress(2, total=2)
            reported.set()

        threading.Thread(target=later, daemon=True).start()
        ctx.report_progress(1, total=2)
        return "done"

    meta = {**request_meta(), "progressToken": "p"}
    call = mcp_body("tools/call", {"name": "leaves_a_reporter", "arguments": {}}, meta=meta)
    stdio = StdioServer(MCPServer(mcp_site), output, user=AnonymousUser())
    stdio.serve([json.dumps(call).encode()])
    assert reported.wait(10)

    lines = [json.loads(line) for line in output.getvalue().splitlines()]
    assert [line.get("method", "response") for line in lines] == [
        "notifications/progress",
        "response",
    ], lines
    assert lines[-1]["result"]["content"][0]["text"] == "done"
