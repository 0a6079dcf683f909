"""The README's curl and SDK examples (docs/examples/) run against a live testproject.

The examples name the demo's URL, http://127.0.0.1:8000/mcp; the tests point them at the
server of this run instead, and otherwise run the files exactly as a reader would.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.live import REPO

if TYPE_CHECKING:
    from tests.live import LiveServer

pytestmark = pytest.mark.live

DEMO_URL = "http://127.0.0.1:8000/mcp"
EXAMPLES = REPO / "docs" / "examples"


def run_curl_example(name: str, server: LiveServer) -> dict:
    script = (EXAMPLES / name).read_text(encoding="utf-8")
    assert DEMO_URL in script
    assert shutil.which("curl"), "the curl examples need curl"
    result = subprocess.run(
        ["bash", "-c", script.replace(DEMO_URL, server.url())],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(result.stdout)


def test_curl_discover_example_gets_the_server_identity(daphne_server: LiveServer):
    """basic/lifecycle.mdx: ``server/discover`` returns ``supportedVersions`` and the
    server's identity in ``_meta["io.modelcontextprotocol/serverInfo"]``."""
    message = run_curl_example("curl_discover.sh", daphne_server)

    result = message["result"]
    assert "2026-07-28" in result["supportedVersions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "django-mcp-demo"


def test_curl_list_example_lists_the_demo_tools_without_mcp_name(daphne_server: LiveServer):
    """basic/transports/streamable-http.mdx: a list method names no item, so the request
    carries ``Mcp-Method`` and no ``Mcp-Name``; server/tools.mdx: ``tools/list`` answers
    ``tools``, each with its ``inputSchema``."""
    message = run_curl_example("curl_list_tools.sh", daphne_server)

    tools = {tool["name"]: tool for tool in message["result"]["tools"]}
    assert tools["search_books"]["inputSchema"]["type"] == "object"
    assert "query" in tools["search_books"]["inputSchema"]["properties"]


def test_curl_tool_call_example_gets_the_response_the_readme_shows(daphne_server: LiveServer):
    """basic/transports/streamable-http.mdx: a POST whose ``Mcp-Method`` and ``Mcp-Name``
    headers mirror the body is answered with one JSON-RPC response."""
    message = run_curl_example("curl_call_tool.sh", daphne_server)

    shown = json.loads((EXAMPLES / "curl_call_tool.response.json").read_text(encoding="utf-8"))
    assert message == shown


def test_curl_resource_read_example_names_the_uri_in_mcp_name(daphne_server: LiveServer):
    """basic/transports/streamable-http.mdx: for ``resources/read`` the ``Mcp-Name`` header
    carries the resource's URI (``params.uri``); the demo's book answers as JSON."""
    message = run_curl_example("curl_read_resource.sh", daphne_server)

    (content,) = message["result"]["contents"]
    assert content["uri"] == "books://9780441172719"
    assert content["mimeType"] == "application/json"
    assert json.loads(content["text"])["title"] == "Dune"


def test_curl_prompt_get_example_names_the_prompt_in_mcp_name(daphne_server: LiveServer):
    """basic/transports/streamable-http.mdx: for ``prompts/get`` the ``Mcp-Name`` header
    carries the prompt's name (``params.name``); arguments are strings."""
    message = run_curl_example("curl_get_prompt.sh", daphne_server)

    (first,) = message["result"]["messages"]
    assert first["role"] == "user"
    assert first["content"]["text"] == "Write a neutral review of 'Dune' by Frank Herbert."


def test_sdk_client_example_prints_what_the_readme_shows(daphne_server: LiveServer):
    """The SDK example (auto mode) discovers, lists and calls tools, printing exactly the
    output the README shows."""
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "sdk_client.py"), daphne_server.url()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    shown = (EXAMPLES / "sdk_client.output.txt").read_text(encoding="utf-8")
    assert result.stdout == shown
