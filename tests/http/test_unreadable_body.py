"""A body the server cannot read to its end (the client went away mid-body): a 400 parse
error, recorded, on Django's WSGI path and the native WSGI path alike.

Django's request stream turns the ``OSError`` into ``UnreadablePostError``. It escaped as a
500: Django's HTML page on its own path (not JSON, on an MCP endpoint) and -32603 on the
native path, each logged as a server failure though the client was at fault (a hostile
probe's finding). basic/transports/streamable-http.mdx: input the server cannot accept
gets an HTTP error status with a JSON-RPC error without an id; basic/index.mdx: -32700
when no complete JSON message was received.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.wsgi import get_wsgi_application

from django_mcp.http.middleware import UNREADABLE_BODY
from django_mcp.http.native_wsgi import NativeMCPWSGI
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.helpers import mcp_body, mcp_environ

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("keep_the_test_database_connection")]


class Reset:
    """A ``wsgi.input`` whose connection resets on the first read."""

    def read(self, *args: Any) -> bytes:
        raise ConnectionResetError("Connection reset by peer")

    def readline(self, *args: Any) -> bytes:
        raise ConnectionResetError("Connection reset by peer")


def environ() -> dict[str, Any]:
    message = mcp_body("tools/list", {})
    return mcp_environ(message, Reset(), len(json.dumps(message)))


@pytest.mark.parametrize("native", [False, True], ids=["django", "native"])
def test_a_body_cut_short_is_a_recorded_400_parse_error(native: bool) -> None:
    app = get_wsgi_application()
    if native:
        app = NativeMCPWSGI(app)
    statuses: list[str] = []
    body = b"".join(app(environ(), lambda status, headers: statuses.append(status)))

    assert statuses == ["400 Bad Request"]
    answer = json.loads(body)
    assert answer["error"] == {"code": -32700, "message": UNREADABLE_BODY}
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(400, -32700)]


class ShortRead:
    """A ``wsgi.input`` whose reads come up short instead of failing (some WSGI servers
    end the stream where the client stopped): it holds a whole message, and no more."""

    def __init__(self, data: bytes) -> None:
        self.stream = io.BytesIO(data)

    def read(self, *args: Any) -> bytes:
        return self.stream.read(*args)

    def readline(self, *args: Any) -> bytes:
        return self.stream.readline(*args)


@pytest.mark.parametrize("native", [False, True], ids=["django", "native"])
def test_a_body_short_of_its_declared_length_is_not_served(native: bool) -> None:
    """What arrived is a whole message, but not the one declared: refused as unread (a
    review's finding: it was served). basic/index.mdx: -32700 when no complete message
    was received."""
    app = get_wsgi_application()
    if native:
        app = NativeMCPWSGI(app)
    env = environ()
    whole = json.dumps(mcp_body("tools/list", {})).encode()
    env["wsgi.input"] = ShortRead(whole)
    env["CONTENT_LENGTH"] = str(len(whole) + 10)
    statuses: list[str] = []
    body = b"".join(app(env, lambda status, headers: statuses.append(status)))

    assert statuses == ["400 Bad Request"]
    assert json.loads(body)["error"] == {"code": -32700, "message": UNREADABLE_BODY}
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(400, -32700)]
