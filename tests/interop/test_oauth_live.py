"""OAuth 2.1 against a real server: the testproject under Daphne, its co-hosted
django-oauth-toolkit issuing the tokens and ``DOTAuthenticator`` in ``AUTHENTICATORS``
validating them, with the official MCP SDK as the client.

basic/authorization.mdx: a server accepts only access tokens issued for itself (RFC 8707,
"Token Audience Binding and Validation"), answers a missing or invalid token with 401 and a
``WWW-Authenticate`` challenge naming its protected resource metadata (RFC 9728 section
5.1; RFC 6750 section 3.1, ``invalid_token``), and that document is readable where the
challenge says.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from django.conf import settings as django_settings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live import REPO, free_port, live_server, run_python, server_env

from .conftest import SETTINGS, SETUP_DATABASE, demo_env

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.live import LiveServer

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        not getattr(django_settings, "OAUTH_SERVER", False),
        reason="django-oauth-toolkit is not installed (or DJANGO_MCP_OAUTH_SERVER=0)",
    ),
]

OTHER_AUDIENCE = "https://other.example/mcp"
CLIENT = types.Implementation(name="django-mcp-oauth-interop", version="1.0")

#: Issue a DOT access token for the seeded admin, as the authorization server would after
#: the authorization code flow with ``resource=<argv[1]>``; print it.
ISSUE_TOKEN = """
import secrets, sys
from datetime import timedelta
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model

call_command("seed_demo", "--admin", verbosity=0)
application, _ = get_application_model().objects.get_or_create(
    name="interop",
    defaults={
        "client_type": "public",
        "authorization_grant_type": "authorization-code",
        "redirect_uris": "http://127.0.0.1:3000/callback",
    },
)
token = get_access_token_model().objects.create(
    user=get_user_model().objects.get(username="admin"),
    application=application,
    token=secrets.token_urlsafe(32),
    expires=timezone.now() + timedelta(hours=1),
    scope="mcp books:write",
    resource=[sys.argv[1]],
)
print(token.token)
"""


@pytest.fixture(scope="module")
def oauth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The testproject with ``DOTAuthenticator`` and ``OAUTH["RESOURCE"]`` = its own URL."""
    workdir = tmp_path_factory.mktemp("oauth-live")
    port = free_port()
    env = {
        **demo_env(workdir / "db.sqlite3"),
        "DJANGO_MCP_OAUTH_SERVER": "1",
        "DJANGO_MCP_OAUTH_RESOURCE": f"http://127.0.0.1:{port}/mcp",
    }
    run_python(SETTINGS, ["-c", SETUP_DATABASE], env, what="migrate + seed_demo")
    with live_server(SETTINGS, workdir, kind="daphne", env=env, port=port) as server:
        yield server


def issue_token(server: LiveServer, resource: str) -> str:
    """A DOT access token in the live server's database, issued for ``resource``."""
    result = subprocess.run(
        [sys.executable, "-c", ISSUE_TOKEN, resource],
        env=server_env(SETTINGS, server.env),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def sdk_set_price(url: str, token: str) -> tuple[Any, list[httpx2.Response]]:
    """Call ``set_price`` with the SDK's streamable HTTP client, its httpx2 client carrying
    the bearer token; return the result (or the exception) and every HTTP response seen."""
    seen: list[httpx2.Response] = []

    async def record(response: httpx2.Response) -> None:
        seen.append(response)

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        with anyio.fail_after(60):
            async with (
                httpx2.AsyncClient(
                    headers=headers,
                    timeout=httpx2.Timeout(30),
                    event_hooks={"response": [record]},
                ) as http,
                Client(
                    streamable_http_client(url, http_client=http),
                    mode="auto",
                    client_info=CLIENT,
                    cache=None,
                ) as client,
            ):
                return await client.call_tool(
                    "set_price", {"isbn": "9780441172719", "price": "13.75"}
                )

    try:
        return anyio.run(main), seen
    except Exception as exc:  # the refusal, as the SDK reports it
        return exc, seen


def test_a_dot_token_for_this_endpoint_calls_the_scope_gated_tool(
    oauth_server: LiveServer,
) -> None:
    """A token issued for the endpoint's resource, with ``books:write``: the tool runs."""
    token = issue_token(oauth_server, oauth_server.url())
    result, seen = sdk_set_price(oauth_server.url(), token)
    assert isinstance(result, types.CallToolResult), result
    assert result.is_error is not True
    assert result.structured_content == {
        "isbn": "9780441172719",
        "title": "Dune",
        "author": "Frank Herbert",
        "price": "13.75",
    }
    assert all(response.status_code == 200 for response in seen)


def test_a_dot_token_for_another_audience_is_refused_with_invalid_token(
    oauth_server: LiveServer,
) -> None:
    """RFC 8707: a valid DOT token whose resource is another server is a 401
    ``invalid_token``, for the SDK and for a plain HTTP client alike."""
    token = issue_token(oauth_server, OTHER_AUDIENCE)
    result, seen = sdk_set_price(oauth_server.url(), token)
    assert not isinstance(result, types.CallToolResult)
    refusals = [response for response in seen if response.status_code == 401]
    assert refusals, [response.status_code for response in seen]
    challenge = refusals[0].headers["WWW-Authenticate"]
    assert 'error="invalid_token"' in challenge
    assert challenge.startswith('Bearer resource_metadata="')


def test_without_a_token_the_challenge_names_a_readable_metadata_document(
    oauth_server: LiveServer,
) -> None:
    """RFC 9728 section 5.1: the challenge's ``resource_metadata`` is where the document
    is, and its ``resource`` is the audience the server's tokens must carry."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "set_price", "arguments": {"isbn": "9780441172719", "price": "1.00"}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "set_price",
    }
    response = httpx.post(oauth_server.url(), json=body, headers=headers, timeout=10)
    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    metadata = oauth_server.url("/.well-known/oauth-protected-resource/mcp")
    assert challenge == f'Bearer resource_metadata="{metadata}", scope="books:write"'
    document = httpx.get(metadata, timeout=10)
    assert document.status_code == 200
    assert document.json()["resource"] == oauth_server.url()
    assert document.json()["scopes_supported"] == ["books:write"]
    # It names the co-hosted authorization server (basic/authorization.mdx: at least one),
    # whose RFC 8414 metadata is where a client looks and carries that very issuer.
    (issuer,) = document.json()["authorization_servers"]
    assert issuer == oauth_server.url("")
    server_metadata = httpx.get(f"{issuer}/.well-known/oauth-authorization-server", timeout=10)
    assert server_metadata.status_code == 200
    assert server_metadata.json()["issuer"] == issuer
