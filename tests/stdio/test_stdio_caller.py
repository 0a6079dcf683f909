"""Who a stdio process acts for, and what it may do: the same as over HTTP.

docs/adr/0002-validate-once.md: transports only map outcomes, so the same request has the
same outcome on every transport. basic/authorization.mdx ("Scope Challenge Handling"):
over HTTP a caller without credentials gets 401 for a target that requires scopes, and so
does any request to a site that requires authentication; stdio has no status line, so it
answers with the JSON-RPC error of that response's body. HTTP authenticates every request,
so a deactivated user, or one whose permissions were taken away, is refused or limited at
their next request; a stdio process reads its user again for every message.
"""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.db import OperationalError

from django_mcp import Context
from django_mcp.cli.identity import resolve_user
from django_mcp.protocol import errors
from django_mcp.server.dispatch import MCPServer
from django_mcp.sites import MCPSite
from django_mcp.stdio.transport import StdioServer
from tests.helpers import call_tool, mcp_body
from tests.streams import sse
from tests.test_commands import run

# transaction=True: serve() recycles the main thread's connection, as between HTTP requests.
pytestmark = pytest.mark.django_db(transaction=True)


def tool_call(name: str, id: int = 1) -> bytes:
    return json.dumps(mcp_body("tools/call", {"name": name, "arguments": {}}, id=id)).encode()


def over_stdio(site: MCPSite, lines: Any, user: Any = None) -> dict[Any, dict[str, Any]]:
    """Serve ``lines`` (read one at a time, as from stdin) and key the answers by id."""
    output = io.BytesIO()
    stdio = StdioServer(MCPServer(site), output, user=user or AnonymousUser())
    stdio.serve(lines)
    answers = [json.loads(line) for line in output.getvalue().splitlines()]
    return {answer.get("id"): answer for answer in answers}


def test_an_anonymous_process_cannot_call_a_tool_that_requires_scopes(
    client: Any, mcp_site: MCPSite, django_user_model: Any
) -> None:
    ran = []

    @mcp_site.tool(scopes_required=["books:write"])
    def restock() -> str:
        ran.append(1)
        return "restocked"

    assert call_tool(client, "restock", {}).status_code == 401
    answer = over_stdio(mcp_site, [tool_call("restock")])[1]
    assert answer["error"]["code"] == errors.INVALID_REQUEST
    assert answer["error"]["message"] == "Authentication required"
    assert ran == []
    # A signed-in process user is not limited by scopes (no token limits it), as a
    # Django session over HTTP is not.
    ada = django_user_model.objects.create_user("ada")
    assert "result" in over_stdio(mcp_site, [tool_call("restock")], user=ada)[1]
    assert ran == [1]


def test_an_anonymous_process_is_refused_by_a_site_that_requires_authentication(
    client: Any, mcp_site: MCPSite
) -> None:
    mcp_site.require_authentication = True

    @mcp_site.tool
    def secret() -> str:
        return "the payroll"

    assert call_tool(client, "secret", {}).status_code == 401
    answer = over_stdio(mcp_site, [tool_call("secret")])[1]
    assert answer["error"]["code"] == errors.INVALID_REQUEST
    assert "the payroll" not in json.dumps(answer)


def test_mcp_call_refuses_what_http_refuses(mcp_site: MCPSite) -> None:
    """``manage.py mcp_call`` runs through the same rule: a protocol error, exit 2."""

    @mcp_site.tool(scopes_required=["books:write"])
    def restock() -> str:
        return "restocked"

    status, out, _ = run("mcp_call", "restock", "--site", mcp_site.name)
    assert status == 2
    assert json.loads(out)["error"]["message"] == "Authentication required"


def test_revoking_a_permission_or_deactivating_the_user_takes_effect_at_the_next_message(
    mcp_site: MCPSite, django_user_model: Any
) -> None:
    @mcp_site.tool(permission_required="auth.view_user")
    def staff_report() -> str:
        return "salaries"

    ada = django_user_model.objects.create_user("ada")
    ada.user_permissions.add(Permission.objects.get(codename="view_user"))
    stored = django_user_model.objects.get(username="ada")

    def lines() -> Any:
        yield tool_call("staff_report", id=1)
        stored.user_permissions.clear()
        yield tool_call("staff_report", id=2)  # hidden now: an unknown tool
        stored.user_permissions.add(Permission.objects.get(codename="view_user"))
        yield tool_call("staff_report", id=3)
        stored.is_active = False
        stored.save()
        yield tool_call("staff_report", id=4)

    answers = over_stdio(mcp_site, lines(), user=resolve_user("ada"))
    assert answers[1]["result"]["content"][0]["text"] == "salaries"
    assert answers[2]["error"]["code"] == errors.INVALID_PARAMS
    assert answers[3]["result"]["content"][0]["text"] == "salaries"
    assert answers[4]["error"]["code"] == errors.INVALID_REQUEST
    assert "deactivated" in answers[4]["error"]["message"]


def test_a_cancellation_is_honoured_while_the_users_database_is_unreachable(
    mcp_site: MCPSite, django_user_model: Any
) -> None:
    """basic/patterns/cancellation.mdx: the receiver SHOULD stop a cancelled request. The
    process's user is read for each message; with the database down that read fails, and
    the line was dropped, ``notifications/cancelled`` included, which needs no database:
    the running request went on to its end."""
    started, cancelled = threading.Event(), threading.Event()

    @mcp_site.tool
    def hang(ctx: Context) -> str:
        ctx.on_cancel(cancelled.set)
        started.set()
        cancelled.wait(3)
        return "cancelled" if cancelled.is_set() else "ran to the end"

    ada = django_user_model.objects.create_user("ada")
    output = io.BytesIO()
    stdio = StdioServer(MCPServer(mcp_site), output, user=ada)

    def unreachable() -> Any:
        raise OperationalError("could not connect to server")

    def lines() -> Any:
        yield tool_call("hang")
        assert started.wait(10)
        stdio.user.current = unreachable  # type: ignore[method-assign]
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        yield json.dumps(cancel).encode()

    stdio.serve(lines())

    assert cancelled.is_set(), output.getvalue()
    assert output.getvalue() == b""  # a cancelled request gets no response


def test_a_subscription_ends_with_its_result_when_the_processs_user_is_deactivated(
    mcp_site: MCPSite, django_user_model: Any, settings: Any
) -> None:
    """basic/patterns/subscriptions.mdx ("Graceful closure"): a server that ends a
    subscription SHOULD answer the listen request with its empty result. Each message reads
    the process's user again; a subscription is one message that lasts, so it asks again
    every ``LISTEN_RECHECK_SECONDS`` and ends once that user is deactivated, while the
    input is still open, instead of delivering changes for ``LISTEN_MAX_SECONDS``."""
    import time

    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_KEEPALIVE_SECONDS": 0.05,
        "LISTEN_MAX_SECONDS": 60,
        "LISTEN_RECHECK_SECONDS": 0.1,
    }
    mcp_site.tool(name="t")(lambda: "x")
    ada = django_user_model.objects.create_user("ada")
    output = io.BytesIO()
    stdio = StdioServer(MCPServer(mcp_site), output, user=resolve_user("ada"))
    ended_while_open: list[float] = []

    def written() -> list[dict[str, Any]]:
        return [json.loads(line) for line in output.getvalue().splitlines()]

    def lines() -> Any:
        listen = {"notifications": {"toolsListChanged": True}}
        yield json.dumps(mcp_body("subscriptions/listen", listen, id=5)).encode()
        deadline = time.monotonic() + 10
        while not written() and time.monotonic() < deadline:
            time.sleep(0.02)
        ada.is_active = False
        ada.save(update_fields=["is_active"])
        started = time.monotonic()
        while time.monotonic() < deadline:
            if any("result" in message for message in written()):
                ended_while_open.append(time.monotonic() - started)
                break
            time.sleep(0.02)

    stdio.serve(lines())

    messages = written()
    assert messages[0]["method"] == "notifications/subscriptions/acknowledged"
    assert messages[1:] == [sse.closing(5)]
    assert ended_while_open, "the subscription went on until the input ended"
