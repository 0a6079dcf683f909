"""The requests the benchmark sends: one fixed POST per scenario, as wrk will send it.

Every MCP request carries what the 2026-07-28 revision asks of a stateless request: the
``_meta`` protocol version, capabilities and client info, and the ``MCP-Protocol-Version``,
``Mcp-Method`` and (for named targets) ``Mcp-Name`` headers. The bare views get the same
body as ``tools/call add(1, 2)`` so both sides parse the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

REVISION = "2026-07-28"
JSON_ACCEPT = "application/json, text/event-stream"


def meta(client_name: str = "bench", **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": client_name, "version": "1"},
        **extra,
    }


@dataclass(frozen=True)
class Scenario:
    """One request: where it goes, its JSON-RPC method and params, and what proves success."""

    name: str
    path: str
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    target: str | None = None  # the Mcp-Name header
    expect: str = '"result"'  # a substring of a correct answer, checked before the load
    meta_extra: dict[str, Any] = field(default_factory=dict)

    def body(self, client_name: str = "bench") -> str:
        params = {"_meta": meta(client_name, **self.meta_extra), **self.params}
        message = {"jsonrpc": "2.0", "id": 1, "method": self.method, "params": params}
        return json.dumps(message, separators=(",", ":"))

    def headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": JSON_ACCEPT,
            "MCP-Protocol-Version": REVISION,
            "Mcp-Method": self.method,
        }
        if self.target is not None:
            headers["Mcp-Name"] = self.target
        return headers


ADD = {"name": "add", "arguments": {"a": 1, "b": 2}}

BARE = Scenario("bare view (def)", "/bench/bare", "tools/call", ADD, "add", '"text":"3"')
BARE_ASYNC = Scenario(
    "bare view (async def)", "/bench/bare-async", "tools/call", ADD, "add", '"text":"3"'
)
TOOLS_CALL = Scenario("tools/call add", "/mcp", "tools/call", ADD, "add", '"text":"3"')
TOOLS_LIST = Scenario("tools/list", "/mcp", "tools/list", {}, None, '"name":"add"')
RESOURCES_READ = Scenario(
    "resources/read",
    "/mcp",
    "resources/read",
    {"uri": "test://static-text"},
    "test://static-text",
    '"contents"',
)
MODELTOOLS_LIST = Scenario(
    "ModelTools list (PostgreSQL)",
    "/mcp",
    "tools/call",
    {"name": "author_list", "arguments": {}},
    "author_list",
    '"results"',
)
PROGRESS_SSE = Scenario(
    "progress stream (SSE)",
    "/mcp",
    "tools/call",
    {"name": "progress_burst", "arguments": {}},
    "progress_burst",
    "notifications/progress",
    {"progressToken": "bench"},
)

#: With the request log on: everything. With it off: what the log-cost target needs.
LOG_ON = (
    BARE,
    BARE_ASYNC,
    TOOLS_CALL,
    TOOLS_LIST,
    RESOURCES_READ,
    MODELTOOLS_LIST,
    PROGRESS_SSE,
)
LOG_OFF = (BARE, TOOLS_CALL)
#: The native WSGI path with the log on: the targets' scenarios and a stream (the rest
#: take the same code as under gunicorn; left out to keep the run under 10 minutes).
NATIVE_WSGI_LOG_ON = (BARE, TOOLS_CALL, PROGRESS_SSE)
#: Each server kind's suites (log on, log off); kinds not listed run LOG_ON and LOG_OFF.
SUITES = {"gunicorn native": (NATIVE_WSGI_LOG_ON, LOG_OFF)}
