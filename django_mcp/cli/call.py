"""``manage.py mcp_call``: one ``tools/call`` through the same admission and dispatch as
every transport (``MCPServer.admit`` with no headers, then ``MCPServer.handle``).

The exit status says how it went: 0 a result, 1 a tool error (``isError: true``), 2 a
protocol error (the JSON-RPC error is printed), 3 the tool asked for input, which a
one-shot command cannot give (the ``input_required`` result is printed), 4 no call was
made (unknown option, site or user, ``--arguments`` that is not JSON: the reason is on
stderr).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, assert_never

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.admission import Admitted, NotificationAccepted, Rejected
from django_mcp.protocol.meta import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY
from django_mcp.protocol.methods import TOOLS_CALL
from django_mcp.server import authorization
from django_mcp.server.dispatch import MCPServer
from django_mcp.stdio.transport import stdio_request

if TYPE_CHECKING:
    from django_mcp.sites import MCPSite

PROTOCOL_VERSION: Final = "2026-07-28"
CLIENT_INFO: Final = {"name": "django-mcp-call", "version": "1.0"}
OK, TOOL_ERROR, PROTOCOL_ERROR, INPUT_REQUIRED, NOT_CALLED = 0, 1, 2, 3, 4


def tool_call_message(name: str, arguments: Any) -> bytes:
    """The ``tools/call`` request a client would send (no client capabilities: nothing
    here could answer an input request)."""
    meta = {
        PROTOCOL_VERSION_KEY: PROTOCOL_VERSION,
        CLIENT_CAPABILITIES_KEY: {},
        CLIENT_INFO_KEY: CLIENT_INFO,
    }
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return jsonrpc.dumps({"jsonrpc": "2.0", "id": 1, "method": TOOLS_CALL, "params": params})


def call(site: MCPSite, name: str, arguments: Any, user: Any) -> tuple[int, dict[str, Any]]:
    """Run tool ``name``; return the exit status and the JSON-RPC response."""
    server = MCPServer(site)
    request = stdio_request(user)
    admission = server.admit(tool_call_message(name, arguments), None, request=request)
    match admission:
        case Rejected():
            return PROTOCOL_ERROR, jsonrpc.error_response(admission.error, admission.request_id)
        case NotificationAccepted():  # the message above always has an id
            raise AssertionError("a request was taken for a notification")
        case Admitted():
            refused = authorization.refusal(
                site, admission, lambda: server.context_for(admission, request=request)
            )
            if refused is not None:  # where HTTP answers 401 or 403
                return PROTOCOL_ERROR, jsonrpc.error_response(refused, admission.request.id)
            reply = server.handle(admission, request=request)
        case _:
            assert_never(admission)
    message = reply.to_message()
    if reply.error is not None:
        return PROTOCOL_ERROR, message
    assert reply.result is not None
    if reply.result.get("resultType") == "input_required":
        return INPUT_REQUIRED, message
    return (TOOL_ERROR if reply.outcome == "tool_error" else OK), message
