"""The official MCP TypeScript client (``@modelcontextprotocol/client`` 2.4.0, pinned in
``tests/interop/ts/package.json``) against the testproject served by Daphne.

basic/lifecycle.mdx (2026-07-28): a client MAY call ``server/discover`` to learn the
server's versions and capabilities; this server has no ``initialize`` handshake, so the
client runs with ``versionNegotiation: { mode: 'auto' }`` (its default legacy mode sends
``initialize``, which the server refuses by design).

``ts/client.mjs`` runs one fixed session (discover, tools, progress, an input round,
a resource, a prompt, completion, ``subscriptions/listen``) and prints what it observed as
one JSON object; each test below checks one part of it, so a regression names what broke.
The server here includes the conformance app (not ``DJANGO_MCP_DEMO``): its fixture tools
provide progress, an elicitation round and a tool-list change. It is this module's own
server, because ``test_trigger_tool_change`` changes the served tool list.

The npm packages come from ``package-lock.json`` (``npm ci``, when ``ts/node_modules`` lacks
the pinned client); the module is skipped only without Node.js 20+ and npm, and a failed
install fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from testproject.books.management.commands.seed_demo import BOOKS
from tests.live import live_server, run_python

from .conftest import SETTINGS, SETUP_DATABASE

pytestmark = pytest.mark.live

TS_DIR = Path(__file__).resolve().parent / "ts"
SDK = "@modelcontextprotocol/client"
SDK_VERSION = json.loads((TS_DIR / "package.json").read_text("utf-8"))["dependencies"][SDK]
MIN_NODE = 20
INSTALL_TIMEOUT = 300  # seconds for npm ci
CLIENT_TIMEOUT = 120  # seconds for the whole client session
DUNE = {"isbn": "9780441172719", "title": "Dune", "author": "Frank Herbert", "price": "10.99"}
#: Tools the script calls, and a few more of each app: all must be listed.
EXPECTED_TOOLS = {
    "search_books",
    "get_book",
    "whoami",
    "stock_report",
    "author_list",
    "test_tool_with_progress",
    "test_input_required_result_elicitation",
    "test_trigger_tool_change",
    "test_dynamic_tool",
}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/list",
}


def node_or_skip() -> None:
    """Skip the module unless ``node`` (20 or newer) and ``npm`` are on PATH."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(f"the TypeScript client needs node and npm on PATH (node={node}, npm={npm})")
    version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=30, check=True
    ).stdout.strip()
    major = int(version.lstrip("v").split(".")[0])
    if major < MIN_NODE:
        pytest.skip(f"the TypeScript client needs Node.js {MIN_NODE}+, found {version}")


def installed_sdk_version() -> str | None:
    manifest = TS_DIR / "node_modules" / SDK / "package.json"
    if not manifest.exists():
        return None
    return json.loads(manifest.read_text("utf-8"))["version"]


def install_client() -> None:
    """``npm ci`` from the lock file unless the pinned client is installed; a failure fails."""
    if installed_sdk_version() == SDK_VERSION:
        return
    npm = shutil.which("npm")
    assert npm is not None
    result = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=TS_DIR,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"npm ci in {TS_DIR} failed:\n{result.stdout}\n{result.stderr}")
    assert installed_sdk_version() == SDK_VERSION


def listed_tool_names(url: str) -> list[str]:
    """The tool names as the server lists them to a plain HTTP client (every page)."""
    names: list[str] = []
    cursor = None
    for request_id in range(1, 100):
        params: dict[str, Any] = {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        }
        if cursor is not None:
            params["cursor"] = cursor
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params}
        response = httpx.post(url, json=message, headers=HEADERS, timeout=30)
        response.raise_for_status()
        result = response.json()["result"]
        names += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            return names
    raise AssertionError("tools/list did not end within 99 pages")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run ``ts/client.mjs`` once against a fresh server; return what it observed, plus the
    server's own plain-HTTP tool listing under ``"listedTools"``."""
    node_or_skip()
    install_client()
    workdir = tmp_path_factory.mktemp("ts-live")
    env = {
        "DJANGO_MCP_SQLITE": str(workdir / "db.sqlite3"),
        "DJANGO_MCP_DB": "sqlite",
        "DJANGO_MCP_DEMO": "0",  # the conformance app's fixture tools too
    }
    run_python(SETTINGS, ["-c", SETUP_DATABASE], env, what="migrate + seed_demo")
    with live_server(SETTINGS, workdir, kind="daphne", env=env) as server:
        listed = listed_tool_names(server.url())
        try:
            result = subprocess.run(
                ["node", "client.mjs", server.url()],
                cwd=TS_DIR,
                capture_output=True,
                text=True,
                timeout=CLIENT_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as timeout:
            pytest.fail(
                f"client.mjs ran over {CLIENT_TIMEOUT} s:\n{timeout.stderr}\n"
                f"server log:\n{server.output()}"
            )
        if result.returncode != 0:
            pytest.fail(
                f"client.mjs exited {result.returncode}:\n{result.stderr}\n"
                f"server log:\n{server.output()}"
            )
        observed = json.loads(result.stdout)
    observed["listedTools"] = listed
    return observed


def test_the_pinned_client_version_ran(session: dict[str, Any]):
    """The observations below are those of the pinned SDK release, nothing else."""
    assert session["sdk"] == {"name": SDK, "version": "2.4.0"}
    assert SDK_VERSION == "2.4.0"


def test_auto_mode_adopts_2026_07_28_from_server_discover(session: dict[str, Any]):
    """basic/lifecycle.mdx: the client learns ``supportedVersions``, the server's identity
    (``_meta["io.modelcontextprotocol/serverInfo"]``), its instructions and capabilities from
    ``server/discover`` and speaks 2026-07-28 without an ``initialize`` handshake."""
    discover = session["discover"]
    assert discover["protocolVersion"] == "2026-07-28"
    assert discover["era"] == "modern"
    assert discover["supportedVersions"] == ["2026-07-28"]
    assert discover["serverName"] == "django-mcp-demo"
    assert discover["instructions"] == "A small bookshop: search the catalogue with search_books."


def test_discover_announces_the_capabilities_the_session_uses(session: dict[str, Any]):
    """server/discover.mdx: the capabilities list what the server serves; list changes are
    announced for tools, prompts and resources, and completion is offered."""
    capabilities = session["discover"]["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert capabilities["completions"] == {}


def test_tools_list_is_what_the_server_lists(session: dict[str, Any]):
    """server/tools.mdx, "Listing Tools", and server/utilities/pagination.mdx: the client's
    aggregated list is the server's listing, every tool once, in the server's order."""
    tools = session["tools"]
    assert tools == session["listedTools"]
    assert len(set(tools)) == len(tools)
    assert set(tools) >= EXPECTED_TOOLS


def test_tools_call_returns_structured_content(session: dict[str, Any]):
    """server/tools.mdx, "Structured Content": ``search_books`` returns the seeded book, and
    the client validated it against the tool's ``outputSchema``."""
    assert session["searchBooks"] == {"isError": False, "structuredContent": [DUNE]}


def test_a_tool_error_is_a_result_with_is_error(session: dict[str, Any]):
    """server/tools.mdx, "Error Handling": a tool execution error is a result with
    ``isError: true``, not a protocol error."""
    assert session["toolError"] == {
        "isError": True,
        "content": [{"type": "text", "text": "No book has ISBN 0000000000000."}],
    }


def test_whoami_sees_the_client_info_of_the_request(session: dict[str, Any]):
    """basic/index.mdx, "_meta": each request carries ``clientInfo`` and
    ``protocolVersion``; the tool reads them from the request itself."""
    assert session["whoami"] == ["You are django-mcp-ts-interop, speaking MCP 2026-07-28."]


def test_progress_notifications_reach_the_onprogress_callback(session: dict[str, Any]):
    """basic/patterns/progress.mdx: with a ``progressToken`` the server sends
    ``notifications/progress`` (increasing progress, the total) before the result; the tool
    answers with the token the client sent."""
    progress = session["progress"]
    assert progress["count"] == 3
    assert progress["notifications"] == [
        {"progress": 0, "total": 100},
        {"progress": 50, "total": 100},
        {"progress": 100, "total": 100},
    ]
    assert progress["sentToken"] is not None
    assert progress["isError"] is False
    assert progress["result"] == [str(progress["sentToken"])]


def test_an_input_round_is_answered_by_the_elicitation_handler(session: dict[str, Any]):
    """basic/patterns/mrtr.mdx and client/elicitation.mdx: the tool asks for input in an
    ``input_required`` result; the client calls its ``elicitation/create`` handler, retries
    the call with the answer, and gets the final result."""
    elicitation = session["elicitation"]
    assert elicitation["requests"] == [
        {
            "message": "What is your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        }
    ]
    assert elicitation["isError"] is False
    assert elicitation["result"] == ["Hello, Ada!"]


def test_resources_read_returns_the_fixed_resource(session: dict[str, Any]):
    """server/resources.mdx, "Reading Resources": the contents carry the URI, the MIME type
    and the text."""
    assert session["resource"] == [
        {
            "uri": "bookshop://about",
            "mimeType": "text/markdown",
            "text": f"# The demo bookshop\n\n{len(BOOKS)} books in the catalogue.\n",
        }
    ]


def test_prompts_get_renders_the_prompt(session: dict[str, Any]):
    """server/prompts.mdx, "Getting a Prompt": the arguments (strings) fill the messages."""
    assert session["prompt"] == [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": "Write a friendly review of 'Dune' by Frank Herbert.",
            },
        }
    ]


def test_completion_suggests_prompt_argument_values(session: dict[str, Any]):
    """server/utilities/completion.mdx: values for a prompt's enumerated argument and for a
    completed one (ISBNs starting with what was typed)."""
    assert session["completion"] == {"tone": ["critical"], "isbn": [DUNE["isbn"]]}


def test_listen_is_acknowledged_and_delivers_tools_list_changed(session: dict[str, Any]):
    """basic/patterns/subscriptions.mdx: ``subscriptions/listen`` is acknowledged with the
    honored filter, a tool-list change made by another request arrives on the listen stream
    as ``notifications/tools/list_changed``, and the client's ``close()`` ends it."""
    listen = session["listen"]
    assert listen["honoredFilter"] == {"toolsListChanged": True}
    assert listen["trigger"] == ["Mutation triggered"]
    # The fixture tool unregisters and re-adds a tool: one change notice or two.
    assert listen["notifications"]
    assert set(listen["notifications"]) == {"notifications/tools/list_changed"}
    assert listen["closed"] == "local"


def test_the_client_reported_no_errors(session: dict[str, Any]):
    """basic/transports/streamable-http.mdx: nothing the server sent made the client's
    ``onerror`` fire (unparsable messages, unexpected responses, transport errors)."""
    assert session["clientErrors"] == []
