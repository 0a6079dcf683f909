"""With the database down, MCP requests still get spec-shaped answers.

A caller with a session cookie makes ``request.user`` a database query. With the database
down that query used to raise through the middleware: an HTML 500 (under ``DEBUG``, one
naming the database host and port), even for a request that should have been refused.
Now refusals stay refusals, and an admitted request whose handling needs the database gets
-32603 with its id (HTTP 200, per ``STATUS_BY_ERROR``), never an HTML page or the database
address; the request log records every one of them.

Each test runs with the database "down" two ways: ``connection.ensure_connection`` raising
the error a driver raises (SQLite and PostgreSQL), and, on PostgreSQL, the real thing, the
connection pointed at a closed port on loopback. The client does not re-raise server
exceptions, so a 500 is seen as a real client would see it.
"""

from __future__ import annotations

import base64
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connection
from django.test import Client

from django_mcp.auth.base import Authenticator
from django_mcp.auth.caller import Caller
from django_mcp.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.sites import MCPSite
from tests.helpers import assert_error, call_tool, mcp_post, notify, override_mcp, post_raw

pytestmark = pytest.mark.django_db(transaction=True)

FAKE_ADDRESS = ('"db.internal.example" (203.0.113.7)', "port 6543")
MODES = [
    "driver-error",
    *(["closed-port"] if os.environ.get("DJANGO_MCP_DB") == "postgres" else []),
]


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def site(mcp_site: MCPSite) -> MCPSite:
    @mcp_site.tool()
    def hello() -> str:
        """Open to everyone."""
        return "hello"

    @mcp_site.tool(permission_required="books.view_book")
    def secret() -> str:
        """Gated by a Django permission: admission asks the database."""
        return "secret"

    return mcp_site


@contextmanager
def database_down(mode: str) -> Iterator[None]:
    """The default database unreachable inside the block, reachable again after it."""
    patch = pytest.MonkeyPatch()
    saved_port = connection.settings_dict["PORT"]
    if mode == "driver-error":
        message = f"connection to server at {FAKE_ADDRESS[0]}, {FAKE_ADDRESS[1]} failed"

        def unreachable() -> None:
            raise OperationalError(message)

        patch.setattr(connection, "ensure_connection", unreachable)
    else:
        connection.close()
        connection.settings_dict["PORT"] = str(_closed_port())
    try:
        yield
    finally:
        patch.undo()
        connection.settings_dict["PORT"] = saved_port
        connection.close()


def signed_in_client(settings: Any) -> Client:
    """A client holding a session cookie, which does not re-raise server exceptions (so a
    500 is seen as a real client sees it); ``DEBUG`` on, as when the 500 leaked the address."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.DEBUG = True
    client = Client(raise_request_exception=False)
    client.force_login(get_user_model().objects.create_user("ada", password="pw"))
    return client


@pytest.fixture(params=MODES)
def down(request: pytest.FixtureRequest, site: MCPSite, settings: Any) -> Iterator[Client]:
    """A signed-in client, and the database down for the test."""
    client = signed_in_client(settings)
    with database_down(request.param):
        yield client


def _assert_no_database_address(response: Any) -> None:
    body = response.content.decode()
    port = connection.settings_dict["PORT"]
    assert response["Content-Type"] == "application/json", body[:300]
    for secret in (*FAKE_ADDRESS, "203.0.113.7", "OperationalError:", f"port {port}"):
        assert secret not in body, body


def test_a_bad_origin_is_still_refused_with_403(down):
    """basic/transports/streamable-http.mdx: a present, invalid ``Origin`` MUST get 403."""
    response = mcp_post(down, "tools/list", {}, headers={"Origin": "https://evil.example"})

    assert_error(response, 403, INVALID_REQUEST)
    _assert_no_database_address(response)


def test_malformed_input_is_still_refused_with_400(down):
    """basic/transports/streamable-http.mdx: a body that is not JSON-RPC gets 400."""
    response = post_raw(down, b"{not json")

    assert_error(response, 400, PARSE_ERROR)


def test_a_request_whose_handling_needs_the_caller_gets_internal_error(down):
    """basic/index.mdx (-32603 Internal error), and docs/guides/records.md: the list is
    bound to the caller, whom the database must name; the answer is JSON-RPC."""
    response = mcp_post(down, "tools/list", {}, id=41)

    error = assert_error(response, 200, INTERNAL_ERROR)
    assert response.json()["id"] == 41
    assert error["data"] == {"exception": "OperationalError"}  # DEBUG: the class, no text
    _assert_no_database_address(response)


def test_admission_that_needs_the_database_answers_internal_error_with_the_id(down):
    """A permission-gated tool is looked up during admission (``Mcp-Param-*`` need it);
    with the database down that lookup is -32603 for this request id, not a 500."""
    response = call_tool(down, "secret", {}, id=7)

    assert_error(response, 200, INTERNAL_ERROR)
    assert response.json()["id"] == 7
    _assert_no_database_address(response)


def test_a_flush_while_the_database_is_down_counts_its_records_as_failed(down):
    with override_mcp(REQUEST_LOG="all"):
        call_tool(down, "hello", {})
        mcp_post(down, "tools/list", {}, headers={"Origin": "https://evil.example"})

    assert recorder.flush() == 0

    assert recorder.stats() == recorder.RecorderStats(
        pending=0, dropped=0, written=0, failed=2, summary_failed=2
    )


@pytest.mark.parametrize("mode", MODES)
def test_the_requests_of_an_outage_are_written_when_the_database_returns(site, settings, mode):
    """Every request served while the database was down has its row: no user (it could
    not be known), the status and error code as sent."""
    client = signed_in_client(settings)
    with database_down(mode):
        statuses = [
            mcp_post(client, "tools/list", {}, headers={"Origin": "https://x.example"}).status_code,
            post_raw(client, b"{not json").status_code,
            call_tool(client, "secret", {}).status_code,
            call_tool(client, "hello", {}).status_code,
        ]

    assert recorder.flush() == 4

    rows = RequestLog.objects.order_by("started_at")
    assert [row.http_status for row in rows] == statuses == [403, 400, 200, 200]
    # The 403 is answered before admission; its row has the code its body carried. ``hello``
    # needs the caller resolved too (looking a tool up is per caller), so it is -32603 as well.
    codes = [INVALID_REQUEST, PARSE_ERROR, INTERNAL_ERROR, INTERNAL_ERROR]
    assert [row.error_code for row in rows] == codes
    assert {(row.user_id, row.username) for row in rows} == {(None, "")}
    assert recorder.stats().failed == 0


DRF_BASIC = {
    "AUTHENTICATORS": [
        "django_mcp.auth.tokens.TokenAuthenticator",
        "django_mcp.auth.drf.DRFAuthenticator",
    ],
    "DRF_AUTHENTICATION_CLASSES": ["rest_framework.authentication.BasicAuthentication"],
}
BASIC = "Basic " + base64.b64encode(b"ada:pw").decode()


@pytest.mark.parametrize(
    "tool", ["spy", "secret", "scoped"], ids=["ungated", "permission-gated", "scope-gated"]
)
@pytest.mark.parametrize(
    ("credentials", "settings_"),
    [
        ({"Authorization": "Bearer mcp_forged"}, {}),
        ({"Authorization": BASIC}, DRF_BASIC),
        ("session", {}),
    ],
    ids=["mcp-token", "drf-basic", "session"],
)
def test_credentials_that_cannot_be_checked_are_never_served(
    site, settings, credentials, settings_, tool
):
    """basic/authorization.mdx, "Token Handling": credentials are validated on every
    request. With the database down they cannot be, and the request must not run as
    anonymous or as nobody. It is answered -32603 with its id before anything runs: a
    permission-gated tool too (an anonymous caller would be told it is unknown), and a
    scope-gated one (whose check needs the caller before the view; it used to be an HTML
    500). Never a 401, which would tell the client to drop a token that may be good. The
    request is recorded when the database returns."""
    client = (
        signed_in_client(settings)
        if credentials == "session"
        else Client(raise_request_exception=False)
    )
    headers = {} if credentials == "session" else credentials
    ran: list[str] = []

    @site.tool
    def spy() -> str:
        ran.append("ran")
        return "ran"

    @site.tool(scopes_required=["books:write"])
    def scoped() -> str:
        ran.append("ran")
        return "ran"

    with override_mcp(**settings_), database_down("driver-error"):
        response = call_tool(client, tool, {}, headers=headers, id=9)
    assert_error(response, 200, INTERNAL_ERROR)
    assert response.json()["id"] == 9
    assert ran == []
    _assert_no_database_address(response)
    recorder.flush()
    rows = RequestLog.objects.values_list("http_status", "error_code", "target", "user")
    assert list(rows) == [(200, INTERNAL_ERROR, tool, None)]


def test_request_user_is_left_as_django_made_it(site):
    """The refusal does not replace ``request.user`` with anything that raises, so a
    middleware that reads it after the response (a logging one, say) does not turn the
    -32603 into Django's 500 page."""
    client = Client(raise_request_exception=False)
    with database_down("driver-error"):
        response = call_tool(client, "secret", {}, headers={"Authorization": "Bearer mcp_forged"})
    assert_error(response, 200, INTERNAL_ERROR)
    assert response.wsgi_request.user.is_authenticated is False  # no DatabaseError


def test_an_unchecked_caller_cannot_tell_a_hidden_name_from_an_unknown_one(site):
    """Hidden declarations answer like unknown ones (docs/guides/permissions.md): a caller
    whose token could not be checked gets -32603 for both, as it gets for every request
    on a site with gated declarations, while an anonymous caller gets "Unknown tool" for
    both."""
    client = Client(raise_request_exception=False)
    forged = {"Authorization": "Bearer mcp_forged"}
    with database_down("driver-error"):
        for name in ("secret", "nope"):
            response = call_tool(client, name, {}, headers=forged, id=5)
            assert_error(response, 200, INTERNAL_ERROR)
            assert response.json()["id"] == 5


class ClaimsAuthenticator(Authenticator):
    """A caller from a header, with no database (the shape of a JWT validator)."""

    def has_credentials(self, request: Any) -> bool:
        return "HTTP_X_CLAIMS" in request.META

    def authenticate(self, request: Any) -> Caller | None:
        return Caller(user=get_user_model()(pk=1, username="ada"), method="claims")


def test_an_outage_while_preloading_permissions_is_answered_not_a_500(site):
    """The caller was known without the database, but their permissions (read once per
    request on a site with gated declarations) could not be: -32603 with the id, never
    Django's 500 page."""
    client = Client(raise_request_exception=False)
    claims = {"AUTHENTICATORS": [f"{__name__}.ClaimsAuthenticator"]}
    with override_mcp(**claims), database_down("driver-error"):
        response = call_tool(client, "hello", {}, headers={"X-Claims": "ada"}, id=3)
    assert_error(response, 200, INTERNAL_ERROR)
    assert response.json()["id"] == 3


def test_a_caller_that_could_not_be_resolved_is_logged_once(site, settings, caplog):
    """The request log does not try the session again (and log it again) for a request
    whose authentication already met the outage."""
    client = signed_in_client(settings)
    with override_mcp(REQUEST_LOG="all"), database_down("driver-error"):
        response = call_tool(client, "hello", {})
    assert_error(response, 200, INTERNAL_ERROR)
    logged = [r for r in caplog.records if "could not resolve the caller" in r.getMessage()]
    assert len(logged) == 1


def test_a_site_that_requires_authentication_serves_nobody_it_could_not_check(mcp_site):
    """``require_authentication``: wrong DRF credentials during an outage are not served
    (the check that would refuse them needs the database), and learn nothing of the
    catalogue an anonymous caller could not see: an unknown name is -32603 too, not
    "Unknown tool", and a notification gets no body."""
    mcp_site.require_authentication = True

    @mcp_site.tool
    def private() -> str:
        return "private"

    client = Client(raise_request_exception=False)
    wrong = {"Authorization": "Basic " + base64.b64encode(b"nobody:wrong").decode()}
    with override_mcp(**DRF_BASIC), database_down("driver-error"):
        answers = [call_tool(client, name, {}, headers=wrong) for name in ("private", "nope")]
        notified = notify(client, "notifications/cancelled", {"requestId": 1}, headers=wrong)
    for response in answers:
        assert_error(response, 200, INTERNAL_ERROR)
        assert response.json()["id"] == 1
    assert notified.status_code >= 400
    assert notified.content == b""
    recorder.flush()
    rows = RequestLog.objects.order_by("started_at").values_list(
        "http_status", "error_code", "method", "target", "request_id"
    )
    assert list(rows) == [
        (200, INTERNAL_ERROR, "tools/call", "private", "1"),
        (200, INTERNAL_ERROR, "tools/call", "nope", "1"),
        (400, INTERNAL_ERROR, "notifications/cancelled", "", ""),
    ]


def test_a_foreign_bearer_token_needs_no_database_to_be_refused(site):
    """No authenticator would look it up, so the outage does not matter: 401."""
    client = Client(raise_request_exception=False)
    with database_down("driver-error"):
        response = call_tool(
            client, "hello", {}, headers={"Authorization": "Bearer opaque-from-elsewhere"}
        )
    assert_error(response, 401, INVALID_REQUEST)


@pytest.mark.parametrize("mode", MODES)
def test_atomic_requests_with_the_database_down_is_answered_in_the_protocols_shape(
    site, settings, mode, monkeypatch, caplog
):
    """With ``ATOMIC_REQUESTS`` Django opens the view's transaction before the view runs,
    and with the database down that fails outside anything the view can answer: Django's
    HTML 500, naming the database under ``DEBUG``. ``MCPMiddleware.process_exception`` now
    answers it as any internal error of an admitted request (basic/index.mdx: -32603, with
    the request's id), reports it as Django would (``django.request``), and the log
    records it."""
    from django.db import connections

    monkeypatch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", True)
    settings.DEBUG = True
    client = Client(raise_request_exception=False)
    with database_down(mode):
        response = mcp_post(client, "tools/call", {"name": "hello", "arguments": {}}, id=7)

    error = assert_error(response, 200, INTERNAL_ERROR)
    assert response.json()["id"] == 7
    _assert_no_database_address(response)
    (reported,) = [r for r in caplog.records if r.name == "django.request"]
    assert (reported.levelname, reported.getMessage()) == ("ERROR", "Internal Server Error: /mcp")
    assert reported.exc_info is not None
    recorder.flush()
    assert list(RequestLog.objects.values_list("target", "error_code")) == [
        ("hello", INTERNAL_ERROR)
    ]
    assert error["message"] == "Internal error"
