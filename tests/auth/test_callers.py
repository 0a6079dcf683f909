"""Sessions, DRF, hidden-like-unknown with equal work, and state bound to the caller's
principal, all through the real HTTP stack."""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from django_mcp.protocol import errors
from tests.auth.conftest import bearer
from tests.helpers import assert_error, call_tool, mcp_post, override_mcp, result_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from django_mcp.sites import MCPSite

pytestmark = pytest.mark.django_db

DRF = {
    "AUTHENTICATORS": [
        "django_mcp.auth.tokens.TokenAuthenticator",
        "django_mcp.auth.drf.DRFAuthenticator",
    ],
    "DRF_AUTHENTICATION_CLASSES": ["rest_framework.authentication.BasicAuthentication"],
}


def text_of(response: Any) -> str:
    return str(result_of(response)["content"][0]["text"])


def basic(username: str, password: str) -> dict[str, str]:
    encoded = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


def test_the_session_user_is_the_caller(client: Client, auth_site: MCPSite, user: Any) -> None:
    client.force_login(user)
    assert text_of(call_tool(client, "whoami", {})) == f"session user:{user.pk} -"


def test_without_the_session_authenticator_a_session_is_anonymous(
    client: Client, auth_site: MCPSite, user: Any
) -> None:
    client.force_login(user)
    with override_mcp(AUTHENTICATORS=["django_mcp.auth.tokens.TokenAuthenticator"]):
        assert text_of(call_tool(client, "whoami", {})) == "anonymous anonymous -"


def test_drf_authentication_classes_authenticate(
    client: Client, auth_site: MCPSite, user: Any
) -> None:
    with override_mcp(**DRF):
        response = call_tool(client, "whoami", {}, headers=basic("reader", "pw"))
    assert text_of(response) == f"drf user:{user.pk} -"


def test_drf_refusing_credentials_is_a_401_with_its_challenge(
    client: Client, auth_site: MCPSite, user: Any
) -> None:
    with override_mcp(**DRF):
        response = call_tool(client, "whoami", {}, headers=basic("reader", "wrong"))
    assert_error(response, 401, errors.INVALID_REQUEST)
    value = response["WWW-Authenticate"]
    assert value.startswith("Bearer resource_metadata=")
    assert 'Basic realm="api"' in value


def test_failed_basic_credentials_get_a_bearer_challenge_without_an_error(
    client: Client, auth_site: MCPSite, user: Any
) -> None:
    """No bearer token was presented, so the Bearer challenge carries no error (RFC 6750
    section 3.1: a request lacking a bearer token gets none; basic/authorization.mdx
    points at RFC 6750); the body still says why the Basic credentials failed."""
    with override_mcp(**DRF):
        response = call_tool(client, "whoami", {}, headers=basic("reader", "wrong"))
    assert_error(response, 401, errors.INVALID_REQUEST)
    bearer, _, basic_challenge = response["WWW-Authenticate"].partition(", Basic ")
    assert "error=" not in bearer
    assert basic_challenge == 'realm="api"'
    assert "password" in response.json()["error"]["message"].lower()


def test_a_bearer_token_drf_does_not_take_is_a_401(client: Client, auth_site: MCPSite) -> None:
    """DRF's ``BasicAuthentication`` answers nothing for a ``Bearer`` header, and no other
    authenticator takes the token: it is refused as invalid (basic/authorization.mdx,
    "Token Handling"), not served as anonymous."""
    with override_mcp(**DRF):
        response = call_tool(client, "whoami", {}, headers=bearer("opaque-from-elsewhere"))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_drf_session_authentication_does_not_vouch_for_a_bearer_token(
    client: Client, auth_site: MCPSite, user: Any
) -> None:
    """DRF's ``SessionAuthentication`` (in DRF's default classes) is a session too: it is
    not asked when a bearer token is presented, so the token no one accepts is refused."""
    client.force_login(user)
    drf_session = {
        **DRF,
        "DRF_AUTHENTICATION_CLASSES": ["rest_framework.authentication.SessionAuthentication"],
    }
    with override_mcp(**drf_session):
        response = call_tool(client, "whoami", {}, headers=bearer("opaque-from-elsewhere"))
    assert_error(response, 401, errors.INVALID_REQUEST)


def test_drf_refusing_a_session_for_its_csrf_check_is_a_401(auth_site: MCPSite, user: Any) -> None:
    """DRF's ``SessionAuthentication`` enforces CSRF and raises ``PermissionDenied``, not
    ``AuthenticationFailed``: that refusal is a 401 with DRF's reason, never a 500."""
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(user)
    drf_session = {
        **DRF,
        "DRF_AUTHENTICATION_CLASSES": [
            "rest_framework.authentication.SessionAuthentication",
            "rest_framework.authentication.BasicAuthentication",
        ],
    }
    with override_mcp(**drf_session):
        response = call_tool(client, "whoami", {}, headers=basic("reader", "pw"))
    error = assert_error(response, 401, errors.INVALID_REQUEST)
    assert "CSRF" in error["message"]


def test_a_site_that_takes_no_bearer_tokens_does_not_look_at_them(
    client: Client, auth_site: MCPSite, user: Any
) -> None:
    """Sessions only: no authenticator takes bearer tokens, so a token (a gateway's) is
    neither refused nor in the way of the session user."""
    client.force_login(user)
    with override_mcp(AUTHENTICATORS=["django_mcp.auth.session.SessionAuthenticator"]):
        response = call_tool(client, "whoami", {}, headers=bearer("opaque-from-elsewhere"))
    assert text_of(response) == f"session user:{user.pk} -"


def test_a_denied_name_does_the_same_work_as_an_unknown_one(
    client: Client, auth_site: MCPSite, user: Any
) -> None:
    """A permission-denied tool answers exactly like an unknown one, with the same
    queries: the user's permissions are read once per request whatever the name (a
    timing difference would otherwise tell denied names from unknown ones)."""
    client.force_login(user)
    answers, queries = [], []
    for name in ("gated", "no_such_tool"):
        with CaptureQueriesContext(connection) as captured:
            response = call_tool(client, name, {})
        answers.append((response.status_code, response.json()["error"]["code"]))
        queries.append([re.sub(r"'[^']*'", "?", q["sql"]) for q in captured.captured_queries])
    assert answers[0] == answers[1] == (200, errors.INVALID_PARAMS)
    assert queries[0] == queries[1]
    assert any("auth_permission" in sql for sql in queries[0])


def test_the_same_for_a_denied_and_an_unknown_name_with_a_token(
    client: Client, auth_site: MCPSite, issue: Callable[..., str]
) -> None:
    token = bearer(issue())
    result_of(call_tool(client, "whoami", {}, headers=token))  # last_used_at written once
    counts = []
    for name in ("gated", "no_such_tool"):
        with CaptureQueriesContext(connection) as captured:
            assert call_tool(client, name, {}, headers=token).status_code == 200
        counts.append(len(captured))
    assert counts[0] == counts[1]


def test_a_cursor_is_bound_to_the_caller_principal(
    client: Client,
    auth_site: MCPSite,
    issue: Callable[..., str],
    django_user_model: Any,
) -> None:
    """Cursors are bound to Context.principal, which comes from the caller: one user's
    cursor is refused for another user's token and for an anonymous caller."""
    mine = bearer(issue())
    other = django_user_model.objects.create_user("other")
    theirs = bearer(issue(owner=other))
    with override_mcp(PAGE_SIZE=1):
        cursor = result_of(mcp_post(client, "tools/list", headers=mine))["nextCursor"]
        result_of(mcp_post(client, "tools/list", {"cursor": cursor}, headers=mine))
        for headers in (theirs, {}):
            response = mcp_post(client, "tools/list", {"cursor": cursor}, headers=headers)
            assert_error(response, 200, errors.INVALID_PARAMS)


@pytest.mark.parametrize(
    ("authenticated", "scopes", "lacking"),
    [
        (True, None, frozenset()),  # a session: not scope-limited
        (True, frozenset({"read", "write"}), frozenset()),
        (True, frozenset({"read"}), frozenset({"read", "write"})),  # one missing names all
        (False, None, frozenset({"read", "write"})),  # nobody signed in: a 401
    ],
)
def test_caller_lacks_names_every_required_scope_or_none(
    authenticated: bool, scopes: frozenset[str] | None, lacking: frozenset[str]
) -> None:
    """basic/authorization.mdx, "Scope Challenge Handling": the one scope rule that
    tools/call (403 insufficient_scope) and a listen stream's updates share."""
    from django.contrib.auth.models import AnonymousUser

    from django_mcp.auth.caller import Caller

    class Signed:
        is_authenticated = True
        pk = 1

    caller = Caller(user=Signed() if authenticated else AnonymousUser(), scopes=scopes)
    assert caller.lacks(["read", "write"]) == lacking
    assert caller.lacks(()) == frozenset()


@pytest.mark.parametrize("client_id", ["c" * 300, "app\x00x", "app\ud800"])
def test_a_client_id_no_column_can_keep_becomes_a_digest_in_the_principal(client_id):
    """Tasks keep the principal in a 255-character column, and a client id is the token
    issuer's text: a long one, or one holding NUL or a surrogate, failed task creation on
    PostgreSQL."""
    from django.contrib.auth.models import AnonymousUser

    from django_mcp.auth.caller import Caller

    caller = Caller(AnonymousUser(), frozenset({"mcp"}), "jwt:1", "oauth", client_id)
    assert caller.principal.startswith("client:sha256:")
    assert len(caller.principal) < 100
    assert Caller(AnonymousUser(), frozenset(), "jwt:1", "oauth", "app").principal == "client:app"


def test_the_per_credential_limit_of_drf_users_without_a_token_row_is_their_own(
    client: Client, auth_site: MCPSite, user: Any
) -> None:
    """``RATE_LIMIT_TOKEN`` counts one credential. A DRF class whose ``auth`` is no row
    (``BasicAuthentication``'s None, simplejwt's token object) named every user's
    credential ``drf:BasicAuthentication``: one user's requests used up the limit of
    every other user signed in by that class, who then got 429s they never earned."""
    from django.contrib.auth import get_user_model
    from django.core.cache import caches

    get_user_model().objects.create_user("other", password="pw2")
    caches["default"].clear()
    with override_mcp(**DRF, RATE_LIMIT_TOKEN="2/m"):
        for _ in range(2):
            assert call_tool(client, "whoami", {}, headers=basic("reader", "pw")).status_code == 200
        response = call_tool(client, "whoami", {}, headers=basic("other", "pw2"))
        assert response.status_code == 200
        assert call_tool(client, "whoami", {}, headers=basic("reader", "pw")).status_code == 429


def test_credentials_the_database_refuses_to_look_up_are_a_401_not_an_outage(
    client: Client, auth_site: MCPSite, user: Any, caplog: Any
) -> None:
    """A Basic username holding NUL (anyone can send one) made PostgreSQL refuse DRF's
    user lookup with a ``DataError``, which was taken for the database being down: -32603
    and an outage in the log, where invalid credentials MUST get a 401
    (basic/authorization/index.mdx, "Token Handling"). SQLite looks the name up and finds
    nobody: a 401 there too."""
    header = "Basic " + base64.b64encode(b"rea\x00der:pw").decode()
    with override_mcp(**DRF):
        response = call_tool(client, "whoami", {}, headers={"Authorization": header})
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert response["WWW-Authenticate"].startswith("Bearer resource_metadata=")
    assert "database" not in caplog.text.lower()
