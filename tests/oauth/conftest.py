"""Fixtures of the OAuth validator tests: signing keys minted per test session, token
minting, and a stub authorization server on 127.0.0.1 that serves a JWKS and an RFC 7662
introspection endpoint through a real HTTP socket (no mock of the HTTP client, no network
beyond loopback)."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from django.core.cache import cache
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from django_mcp.auth.oauth.jwks import forget_key_sets

if TYPE_CHECKING:
    from collections.abc import Iterator

RESOURCE = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"
CLIENT_ID = "mcp-resource-server"
CLIENT_SECRET = "s3cret:with/odd chars"


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    def jwk(self) -> dict[str, Any]:
        algorithm = RSAAlgorithm if self.alg.startswith("RS") else ECAlgorithm
        data = algorithm.to_jwk(self.private.public_key(), as_dict=True)
        return {**data, "kid": self.kid, "alg": self.alg, "use": "sig"}

    def mint(self, headers: dict[str, Any] | None = None, **claims: Any) -> str:
        now = int(time.time())
        payload = {
            "iss": ISSUER,
            "aud": RESOURCE,
            "sub": "alice",
            "iat": now,
            "exp": now + 300,
            "jti": uuid.uuid4().hex,
            "scope": "mcp books:read",
        }
        payload.update(claims)
        payload = {key: value for key, value in payload.items() if value is not None}
        return jwt.encode(
            payload, self.private, algorithm=self.alg, headers={"kid": self.kid, **(headers or {})}
        )


_RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
_RSA_NEXT = rsa.generate_private_key(public_exponent=65537, key_size=2048)
_EC = ec.generate_private_key(ec.SECP256R1())


@pytest.fixture
def rsa_key() -> SigningKey:
    return SigningKey("rsa-1", "RS256", _RSA)


@pytest.fixture
def rotated_key() -> SigningKey:
    return SigningKey("rsa-2", "RS256", _RSA_NEXT)


@pytest.fixture
def ec_key() -> SigningKey:
    return SigningKey("ec-1", "ES256", _EC)


@dataclass
class StubAuthorizationServer:
    """What the stub serves and what it was asked."""

    base_url: str = ""
    jwks: dict[str, Any] = field(default_factory=lambda: {"keys": []})
    #: token -> introspection answer; unknown tokens are {"active": false}
    introspection: dict[str, dict[str, Any]] = field(default_factory=dict)
    jwks_requests: int = 0
    introspection_requests: list[dict[str, Any]] = field(default_factory=list)
    broken: bool = False  # answer 500 with an HTML body
    #: When set, a JWKS request sets ``jwks_asked`` and is answered only once ``release``
    #: is set (at most 10 s later): an endpoint that hangs, for as long as a test needs.
    hang: bool = False
    jwks_asked: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    @property
    def jwks_url(self) -> str:
        return f"{self.base_url}/jwks.json"

    @property
    def introspection_url(self) -> str:
        return f"{self.base_url}/introspect"


def _handler(stub: StubAuthorizationServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path != "/jwks.json":
                return self._send(404, {})
            stub.jwks_requests += 1
            if stub.hang:
                stub.jwks_asked.set()
                stub.release.wait(10)
            if stub.broken:
                return self._send(500, b"<html>down</html>")
            return self._send(200, stub.jwks)

        def do_POST(self) -> None:
            if self.path != "/introspect":
                return self._send(404, {})
            length = int(self.headers.get("Content-Length", "0"))
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            stub.introspection_requests.append(
                {"form": form, "authorization": self.headers.get("Authorization")}
            )
            if stub.broken:
                return self._send(500, b"<html>down</html>")
            expected = (
                "Basic "
                + base64.b64encode(b"mcp-resource-server:s3cret%3Awith%2Fodd%20chars").decode()
            )
            if self.headers.get("Authorization") != expected:
                return self._send(401, {"error": "invalid_client"})
            return self._send(200, stub.introspection.get(form.get("token", ""), {"active": False}))

    return Handler


@pytest.fixture
def authorization_server() -> Iterator[StubAuthorizationServer]:
    stub = StubAuthorizationServer()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    stub.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    forget_key_sets()
    cache.clear()
    yield
    forget_key_sets()
    cache.clear()


@pytest.fixture
def oauth_settings(settings: Any, authorization_server: StubAuthorizationServer) -> dict[str, Any]:
    """DJANGO_MCP["OAUTH"] pointing at the stub; tests change it through the returned dict
    and :func:`configure`."""
    value = {
        "RESOURCE": RESOURCE,
        "ISSUER": ISSUER,
        "JWKS_URL": authorization_server.jwks_url,
        "INTROSPECTION_URL": authorization_server.introspection_url,
        "INTROSPECTION_CLIENT_ID": CLIENT_ID,
        "INTROSPECTION_CLIENT_SECRET": CLIENT_SECRET,
        "HTTP_TIMEOUT_SECONDS": 5,
    }
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "OAUTH": value}
    return value


def configure(settings: Any, **changes: Any) -> None:
    """Change some keys of DJANGO_MCP["OAUTH"] (a new dict, so setting_changed fires)."""
    oauth = {**settings.DJANGO_MCP["OAUTH"], **changes}
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "OAUTH": oauth}


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}
