"""A token-gated tool over a real server (Daphne) with the official SDK and curl: the
bearer token is accepted, and a request without one gets the 401 challenge
(basic/authorization.mdx, "Access Token Usage" and "Error Handling"; RFC 6750 section 3)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from typing import TYPE_CHECKING

import httpx
import pytest

from testproject.books.models import Book
from tests.live import REPO, server_env

from .conftest import SETTINGS

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .conftest import LiveServer

pytestmark = pytest.mark.live

DEMO_URL = "http://127.0.0.1:8000/mcp"
EXAMPLES = REPO / "docs" / "examples"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "set_price",
}


def body(price: str) -> dict[str, object]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    arguments = {"isbn": "9780441172719", "price": price}
    params = {"name": "set_price", "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def create_token(server: LiveServer, *scopes: str) -> str:
    env = server_env(SETTINGS, server.env)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "seed_demo", "--admin"], env=env, cwd=REPO, check=True, timeout=60)
    options = [arg for scope in scopes for arg in ("--scope", scope)]
    result = subprocess.run(
        [*manage, "mcp_create_token", "admin", *options],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout.strip()


def test_without_a_token_the_gated_tool_gets_the_401_challenge(daphne_server: LiveServer) -> None:
    response = httpx.post(daphne_server.url(), json=body("1.00"), headers=HEADERS, timeout=10)
    assert response.status_code == 401
    challenge = response.headers["WWW-Authenticate"]
    metadata = daphne_server.url().replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert challenge == f'Bearer resource_metadata="{metadata}", scope="books:write"'
    document = httpx.get(metadata, timeout=10).json()
    assert document["resource"] == daphne_server.url()
    assert document["scopes_supported"] == ["books:write"]


def test_a_token_without_the_scope_gets_403(daphne_server: LiveServer) -> None:
    token = create_token(daphne_server, "books:read")
    headers = {**HEADERS, "Authorization": f"Bearer {token}"}
    response = httpx.post(daphne_server.url(), json=body("1.00"), headers=headers, timeout=10)
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["WWW-Authenticate"]


@pytest.fixture
def seeded_prices_restored(daphne_server: LiveServer) -> Iterator[None]:
    """The examples set Dune's price on the server every test of the package shares, and
    others expect the seeded one: it is put back after the test, whatever its outcome."""
    database = daphne_server.env["DJANGO_MCP_SQLITE"]
    table = Book._meta.db_table
    with sqlite3.connect(database) as connection:
        seeded = connection.execute(f'SELECT "isbn", "price" FROM "{table}"').fetchall()
    try:
        yield
    finally:
        with sqlite3.connect(database, timeout=20) as connection:
            connection.executemany(
                f'UPDATE "{table}" SET "price" = ? WHERE "isbn" = ?',
                [(price, isbn) for isbn, price in seeded],
            )
        connection.close()


@pytest.mark.usefixtures("seeded_prices_restored")
def test_the_sdk_example_calls_the_gated_tool_with_a_bearer_token(
    daphne_server: LiveServer,
) -> None:
    token = create_token(daphne_server, "books:write")
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "sdk_token_client.py"), daphne_server.url()],
        env={**os.environ, "MCP_TOKEN": token},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (EXAMPLES / "sdk_token_client.output.txt").read_text("utf-8")


@pytest.mark.usefixtures("seeded_prices_restored")
def test_the_curl_example_calls_the_gated_tool(daphne_server: LiveServer) -> None:
    script = (EXAMPLES / "curl_token.sh").read_text(encoding="utf-8")
    assert DEMO_URL in script
    assert shutil.which("curl"), "the curl examples need curl"
    script = script.replace(DEMO_URL, daphne_server.url())
    script = script.replace(".venv/bin/python ", f"{sys.executable} ")
    # As a reader runs it: nothing but the server's database; the script says it is the demo.
    env = server_env(SETTINGS, daphne_server.env)
    for name in ("DJANGO_MCP_DEMO", "DJANGO_MCP_INSECURE"):
        env.pop(name, None)
    result = subprocess.run(
        ["bash", "-c", script],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    message = json.loads(result.stdout)
    assert message["result"]["structuredContent"]["price"] == "12.50"
