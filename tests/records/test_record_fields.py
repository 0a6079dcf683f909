"""What a maintainer reads in each row: the client on refused requests too, the error
message as sent, "hidden, not unknown", the client's address and User-Agent
(docs/guides/records.md, "What is recorded").

Every row here is written the way production writes it: a request through the Django test
client (middleware, admission, view), then a flush.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from django_mcp import Context
from django_mcp.protocol import errors
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.requestlog.records import RequestRecord
from django_mcp.sites import MCPSite
from tests.helpers import (
    OMIT,
    PROTOCOL_VERSION,
    call_tool,
    mcp_post,
    override_mcp,
    post_raw,
    request_meta,
)

pytestmark = pytest.mark.django_db

CLIENT = {"name": "inspector", "version": "0.9.1"}
#: A dated revision newer than the one implemented: served best-effort.
NEWER = "2099-01-01"


def staff_only(ctx: Context) -> bool:
    return bool(ctx.user is not None and ctx.user.is_staff)


@pytest.fixture
def site(mcp_site: MCPSite) -> MCPSite:
    @mcp_site.tool()
    def hello() -> str:
        """Open to everyone."""
        return "hello"

    @mcp_site.tool(permission_required="books.view_book")
    def secret() -> str:
        """Hidden from callers without books.view_book."""
        return "secret"

    @mcp_site.tool()
    def broken() -> str:
        """Fails with an internal error whose details must not reach anyone."""
        raise RuntimeError("password=hunter2 in the connection string")

    @mcp_site.prompt(permission=staff_only)
    def staff_prompt() -> str:
        """Staff only."""
        return "hi"

    @mcp_site.resource("secret://files/{name}", permission=staff_only)
    def secret_file(name: str) -> str:
        """Staff only."""
        return name

    return mcp_site


def only_row() -> RequestLog:
    assert recorder.flush() == 1
    [row] = RequestLog.objects.all()
    return row


def test_a_call_of_an_unknown_tool_keeps_the_client_and_the_revision(site: MCPSite) -> None:
    """basic/index.mdx, "_meta": clientInfo rides on every request, so a refused request
    still says who sent it; the error message is the one the client received."""
    response = call_tool(Client(), "no_such_tool", {}, meta=request_meta(client_info=CLIENT))
    assert response.json()["error"]["code"] == errors.INVALID_PARAMS

    row = only_row()
    assert (row.client_name, row.client_version) == ("inspector", "0.9.1")
    assert (row.served_how, row.served_revision) == ("supported", row.declared_revision)
    assert row.error_code == errors.INVALID_PARAMS
    assert row.error_message == response.json()["error"]["message"] == "Unknown tool: no_such_tool"
    assert row.permission_denied is False


def test_a_bad_meta_keeps_what_was_readable_of_the_client(site: MCPSite) -> None:
    """A request refused for its _meta (here: no clientCapabilities) still names its
    client, where clientInfo itself was readable."""
    meta = request_meta(client_info=CLIENT, **{"io.modelcontextprotocol/clientCapabilities": OMIT})
    response = call_tool(Client(), "hello", {}, meta=meta)
    assert response.status_code == 400

    row = only_row()
    assert (row.client_name, row.client_version) == ("inspector", "0.9.1")
    assert row.error_message == response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("hidden", "unknown"),
    [
        (("tools/call", {"name": "secret"}), ("tools/call", {"name": "nothing"})),
        (("prompts/get", {"name": "staff_prompt"}), ("prompts/get", {"name": "nothing"})),
        (
            ("resources/read", {"uri": "secret://files/a"}),
            ("resources/read", {"uri": "nothing://a"}),
        ),
    ],
)
def test_a_hidden_name_is_flagged_in_the_log_only(
    site: MCPSite, hidden: tuple[str, dict[str, Any]], unknown: tuple[str, dict[str, Any]]
) -> None:
    """server/tools.mdx and server/prompts.mdx: the lists vary by authorization; what a
    caller may not use answers like what does not exist (tests/test_permissions.py holds
    the byte-for-byte comparison). The log alone learns that the name exists and was
    refused for permissions."""
    denied = mcp_post(Client(), *hidden)
    missing = mcp_post(Client(), *unknown)
    assert denied.status_code == missing.status_code
    assert denied.json()["error"]["code"] == missing.json()["error"]["code"]
    assert "denied" not in denied.content.decode().lower()
    assert "permission" not in denied.content.decode().lower()

    assert recorder.flush() == 2
    rows = RequestLog.objects.order_by("started_at")
    assert [(row.target, row.permission_denied) for row in rows] == [
        (next(iter(hidden[1].values())), True),
        (next(iter(unknown[1].values())), False),
    ]


def test_an_allowed_caller_is_not_flagged(site: MCPSite) -> None:
    user = get_user_model().objects.create_user("reader")
    user.user_permissions.add(Permission.objects.get(codename="view_book"))
    client = Client()
    client.force_login(user)

    assert "error" not in call_tool(client, "secret", {}).json()
    row = only_row()
    assert row.permission_denied is False
    assert row.error_message == ""


def test_an_internal_error_is_recorded_as_masked_as_it_was_sent(site: MCPSite) -> None:
    """basic/index.mdx: errors carry a message; the default handler masks internal details,
    and the log stores the message as sent, never the exception's text."""
    response = call_tool(Client(), "broken", {})
    sent = response.json()["error"]["message"]

    row = only_row()
    assert row.error_code == errors.INTERNAL_ERROR
    assert row.error_message == sent
    assert "hunter2" not in row.error_message


def test_a_refusal_before_admission_records_its_code_and_message(site: MCPSite) -> None:
    """basic/transports/streamable-http.mdx: a request with a disallowed Origin is answered
    403; its row carries the JSON-RPC error of that answer."""
    response = mcp_post(Client(), "tools/list", {}, headers={"Origin": "https://evil.example"})
    assert response.status_code == 403

    row = only_row()
    assert row.error_code == response.json()["error"]["code"]
    assert row.error_message == response.json()["error"]["message"] != ""


def test_a_long_error_message_is_cut_and_cleaned(site: MCPSite) -> None:
    """The message is bounded by its column and sanitised like every text field."""
    name = "x\u202e" + "y" * 900
    call_tool(Client(), name, {})

    row = only_row()
    assert len(row.error_message) == 500
    assert "\u202e" not in row.error_message


def test_the_client_address_and_user_agent_are_recorded(site: MCPSite) -> None:
    call_tool(Client(), "hello", {}, REMOTE_ADDR="198.51.100.7", HTTP_USER_AGENT="inspector/0.9")

    row = only_row()
    assert row.remote_addr == "198.51.100.7"
    assert row.user_agent == "inspector/0.9"


def test_behind_trusted_proxies_the_forwarded_address_is_recorded(site: MCPSite) -> None:
    with override_mcp(TRUSTED_PROXY_HOPS=1):
        call_tool(Client(), "hello", {}, HTTP_X_FORWARDED_FOR="203.0.113.9")
        call_tool(Client(), "hello", {}, HTTP_X_FORWARDED_FOR="not-an-address")

    assert recorder.flush() == 2
    rows = RequestLog.objects.order_by("started_at")
    # An X-Forwarded-For that is no address is never stored (nor fails the row).
    assert [row.remote_addr for row in rows] == ["203.0.113.9", None]


def test_the_address_and_user_agent_can_be_turned_off(site: MCPSite) -> None:
    with override_mcp(REQUEST_LOG_REMOTE_ADDR=False, REQUEST_LOG_USER_AGENT=False):
        call_tool(Client(), "hello", {}, HTTP_USER_AGENT="inspector/0.9")

    row = only_row()
    assert row.remote_addr is None
    assert row.user_agent == ""


def test_an_unreadable_body_has_no_client(site: MCPSite) -> None:
    post_raw(Client(), b"{not json")

    row = only_row()
    assert (row.client_name, row.error_code) == ("", errors.PARSE_ERROR)


def test_every_field_of_a_row_holds_its_own_value(site: MCPSite) -> None:
    """Each column gets the value meant for it: the exchange builds its record
    positionally, in the columns' order (a keyword call cost a fifth of the log's price per
    request), so two fields swapped would still be a well-formed row. Every field here has
    a value no other field could take, for a served call and for a refused one (a newer
    revision served best-effort, so the declared and the served one differ; a name the
    caller's permissions hide, so one row is flagged)."""
    user = get_user_model().objects.create_user("row-reader")
    client = Client()
    client.force_login(user)
    meta = request_meta(version=NEWER, client_info=CLIENT)
    common = {"REMOTE_ADDR": "198.51.100.7", "HTTP_USER_AGENT": "inspector/0.9"}
    with override_mcp(REQUEST_LOG_PARAMS=True):
        call_tool(client, "hello", {}, id="call-1", meta=meta, **common)
        refused = call_tool(client, "secret", {}, id=77, meta=meta, **common)

    assert recorder.flush() == 2
    served, failed = RequestLog.objects.order_by("started_at")
    expected_common = {
        "site": site.name,
        "method": "tools/call",
        "declared_revision": NEWER,
        "served_revision": PROTOCOL_VERSION,
        "served_how": "best-effort",
        "client_name": "inspector",
        "client_version": "0.9.1",
        "user_id": user.pk,
        "username": "row-reader",
        "http_status": 200,
        "remote_addr": "198.51.100.7",
        "user_agent": "inspector/0.9",
    }
    fields = [*expected_common, "target", "request_id", "outcome", "error_code", "params"]
    fields += ["error_message", "permission_denied"]
    assert {name: value_of(served, name) for name in fields} == {
        **expected_common,
        "target": "hello",
        "request_id": "call-1",
        "outcome": "ok",
        "error_code": None,
        "params": {"name": "hello", "arguments": {}, "_meta": meta},
        "error_message": "",
        "permission_denied": False,
    }
    assert {name: value_of(failed, name) for name in fields} == {
        **expected_common,
        "target": "secret",
        "request_id": "77",
        "outcome": "protocol_error",
        "error_code": errors.INVALID_PARAMS,
        "params": None,  # refused at admission: its params are not kept
        "error_message": refused.json()["error"]["message"],
        "permission_denied": True,
    }
    for row in (served, failed):
        assert row.started_at is not None
        assert isinstance(row.duration_ms, float)
        assert 0 < row.duration_ms < 60_000
    # Every field of the record is a column checked here.
    assert set(RequestRecord._fields) == {*fields, "started_at", "duration_ms"}


def test_an_exchange_records_one_value_per_field(
    site: MCPSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exchange builds its record as a plain tuple (the named tuple's ``_make``, which
    checked the length, cost the request path a call and a copy): whichever branch built
    it (served, refused at admission, refused before it, a notification), it holds one
    value per field."""
    submitted: list[tuple[Any, ...]] = []
    monkeypatch.setattr(recorder, "submit", submitted.append)
    client = Client()
    call_tool(client, "hello", {})
    call_tool(client, "secret", {})
    client.get("/mcp/", HTTP_ACCEPT="application/json")
    post_raw(client, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    assert len(submitted) == 4
    assert {type(record) for record in submitted} == {tuple}
    assert {len(record) for record in submitted} == {len(RequestRecord._fields)}


def value_of(row: RequestLog, name: str) -> Any:
    """A column's value, the params read back from their JSON."""
    value = getattr(row, name)
    return json.loads(value) if name == "params" and value is not None else value


def test_an_ipv6_zone_id_is_not_recorded(site: MCPSite) -> None:
    """PostgreSQL's inet has no place for a zone id and refuses the text with one, so a
    row written in COPY's text format (or the row-by-row retry) was lost; the address is
    stored without it, whatever format writes it."""
    call_tool(Client(), "hello", {}, REMOTE_ADDR="fe80::1%eth0")

    assert only_row().remote_addr == "fe80::1"


@pytest.mark.parametrize(
    ("forwarded", "recorded"),
    [("203.0.113.9:50001", "203.0.113.9"), ("[2001:db8::1]:50001", "2001:db8::1")],
)
def test_a_port_in_x_forwarded_for_is_not_the_address_recorded(
    site: MCPSite, forwarded: str, recorded: str
) -> None:
    """Some proxies (Azure Application Gateway) append ``address:port``: the limits count
    the address without it, and the log must record it too, not drop it as no address
    (every row of such a deployment had no client)."""
    with override_mcp(TRUSTED_PROXY_HOPS=1):
        call_tool(Client(), "hello", {}, HTTP_X_FORWARDED_FOR=forwarded)

    assert only_row().remote_addr == recorded
