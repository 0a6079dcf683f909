"""An authorization server that answers what is not HTTP, through the real HTTP stack: the
JWKS fetch and the introspection call fail, and the token is refused with 401 (the keys or
the answer are unavailable), never a 500 (basic/authorization/index.mdx, "Token Handling":
a token that cannot be validated is an invalid token)."""

from __future__ import annotations

import socket
import threading
from typing import TYPE_CHECKING, Any

import pytest

from django_mcp.protocol import errors
from tests.helpers import assert_error, call_tool
from tests.oauth.conftest import configure
from tests.oauth.test_http import bearer, site, use

if TYPE_CHECKING:
    from collections.abc import Iterator

    from django.test import Client

    from django_mcp.sites import MCPSite
    from tests.oauth.conftest import SigningKey

pytestmark = pytest.mark.django_db

__all__ = ["site"]  # the fixture, imported for the tests here

#: Answers http.client cannot read: no status line, and a header line past its limit; and
#: one it reads whose JSON is nested past what the decoder recurses into (RecursionError,
#: no ValueError), well under the body limit.
_DEEP = b"[" * 100_000
NOT_HTTP = [
    b"garbage\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000 + b"\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(_DEEP), _DEEP),
]


@pytest.fixture(params=NOT_HTTP, ids=["status-line", "header-line", "json-too-deep"])
def broken_server(request: Any) -> Iterator[str]:
    """A server on 127.0.0.1 that answers every connection with ``request.param``."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.recv(65_536)
                connection.sendall(request.param)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def test_a_jwks_answer_that_is_not_http_is_a_401(
    client: Client,
    site: MCPSite,
    settings: Any,
    oauth_settings: Any,
    rsa_key: SigningKey,
    broken_server: str,
) -> None:
    """``http.client`` raises ``BadStatusLine`` or ``LineTooLong``, which are no
    ``OSError``: the fetch let them through, a 500 on every request with a JWT."""
    use(settings, "django_mcp.auth.oauth.jwt.JWTAuthenticator")
    configure(settings, JWKS_URL=f"{broken_server}/jwks.json")
    response = call_tool(client, "whoami", {}, headers=bearer(rsa_key.mint()))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert "unavailable" in response["WWW-Authenticate"]


def test_an_introspection_answer_that_is_not_http_is_a_401(
    client: Client, site: MCPSite, settings: Any, oauth_settings: Any, broken_server: str
) -> None:
    use(settings, "django_mcp.auth.oauth.introspection.IntrospectionAuthenticator")
    configure(settings, INTROSPECTION_URL=f"{broken_server}/introspect")
    response = call_tool(client, "whoami", {}, headers=bearer("opaque"))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert "could not be introspected" in response["WWW-Authenticate"]
