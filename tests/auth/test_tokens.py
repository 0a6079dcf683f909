"""Access tokens over the real HTTP stack: every answer of ``TokenAuthenticator``
(basic/authorization.mdx, "Token Handling" and "Error Handling"; RFC 6750 section 3)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.test import AsyncClient

from django_mcp.auth.models import AccessToken, digest
from django_mcp.http import middleware
from django_mcp.protocol import errors
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.auth.conftest import bearer
from tests.helpers import (
    assert_error,
    call_tool,
    mcp_body,
    mcp_headers,
    mcp_post,
    override_mcp,
    result_of,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.test import Client

    from django_mcp.sites import MCPSite

pytestmark = pytest.mark.django_db

METADATA = "http://testserver/.well-known/oauth-protected-resource/mcp"


def text_of(response: Any) -> str:
    return str(result_of(response)["content"][0]["text"])


def challenge(response: Any) -> str:
    return str(response["WWW-Authenticate"])


def test_a_valid_token_authenticates_the_user_with_its_scopes(
    client: Client, auth_site: Any, issue: Callable[..., str], user: Any
) -> None:
    """Authorization: Bearer <token> (basic/authorization.mdx, "Token Requirements")."""
    token = issue("books:read books:write")
    response = call_tool(client, "whoami", {}, headers=bearer(token))
    assert text_of(response) == f"token user:{user.pk} books:read books:write"


def test_no_token_is_anonymous_where_authentication_is_optional(
    client: Client, auth_site: Any
) -> None:
    assert text_of(call_tool(client, "whoami", {})) == "anonymous anonymous -"


@pytest.mark.parametrize("kind", ["unknown", "expired", "revoked", "inactive"])
def test_a_bad_token_is_a_401_never_anonymous(
    client: Client, auth_site: Any, issue: Callable[..., str], user: Any, kind: str
) -> None:
    """Invalid or expired tokens MUST receive a 401 (basic/authorization.mdx, "Token
    Handling"), with error="invalid_token" (RFC 6750 section 3.1)."""
    token = issue("books:read", expires_in=-1 if kind == "expired" else None)
    if kind == "unknown":
        token = token[:-4] + "AAAA"
    if kind == "revoked":
        AccessToken.objects.get(digest=digest(token)).revoke()
    if kind == "inactive":
        user.is_active = False
        user.save()
    response = call_tool(client, "whoami", {}, headers=bearer(token))
    error = assert_error(response, 401, errors.INVALID_REQUEST)
    assert error["message"]
    value = challenge(response)
    assert value.startswith("Bearer ")
    assert f'resource_metadata="{METADATA}"' in value
    assert 'error="invalid_token"' in value
    assert "id" not in response.json()  # refused before the body was read


def test_tokens_are_read_from_the_header_only(
    client: Client, auth_site: Any, issue: Callable[..., str]
) -> None:
    """Access tokens MUST NOT be included in the URI query string
    (basic/authorization.mdx, "Token Requirements"): one there is ignored."""
    token = issue("books:read books:write")
    response = call_tool(client, "whoami", {}, path=f"/mcp?access_token={token}")
    assert text_of(response) == "anonymous anonymous -"


def test_tokens_are_stored_hashed(issue: Callable[..., str]) -> None:
    token = issue("a")
    row = AccessToken.objects.get()
    assert token not in {row.digest, row.prefix, row.scopes, row.name}
    assert row.digest == digest(token)
    assert token.startswith(row.prefix)


def test_last_used_is_written_at_most_once_per_interval(
    client: Client,
    auth_site: Any,
    issue: Callable[..., str],
    django_assert_num_queries: Any,
) -> None:
    """A burst of requests with one token costs one UPDATE, not one per request (the two
    other queries are the user's permissions, read once per request on a gated site)."""
    token = issue()
    with override_mcp(TOKEN_LAST_USED_INTERVAL=3600):
        with django_assert_num_queries(4):  # token+user, UPDATE last_used_at, 2 permissions
            result_of(call_tool(client, "whoami", {}, headers=bearer(token)))
        with django_assert_num_queries(3):  # no UPDATE
            result_of(call_tool(client, "whoami", {}, headers=bearer(token)))
    assert AccessToken.objects.get().last_used_at is not None
    with override_mcp(TOKEN_LAST_USED_INTERVAL=0), django_assert_num_queries(4):
        result_of(call_tool(client, "whoami", {}, headers=bearer(token)))


def test_the_command_prints_the_token_once(user: Any, capsys: Any) -> None:
    call_command("mcp_create_token", "reader", "--scope", "books:write", "--expires", "30d")
    out, err = capsys.readouterr()
    token = out.strip()
    row = AccessToken.objects.get()
    assert row.digest == digest(token)
    assert row.scopes == "books:write"
    assert row.expires_at is not None
    assert token not in err


@pytest.mark.parametrize("token", ["eyJhbGciOi.foreign.token", "opaque-from-elsewhere", ""])
def test_a_bearer_token_no_authenticator_accepts_is_a_401_never_anonymous(
    client: Client, auth_site: Any, token: str
) -> None:
    """A token this server cannot validate is an invalid token: "Invalid or expired tokens
    MUST receive a HTTP 401 response", and servers accept only tokens issued for them
    (basic/authorization.mdx, "Token Handling"; RFC 6750 section 3.1). Here no configured
    authenticator takes the token (not ``mcp_...``, no OAuth validator), and it is refused
    with a challenge, not served as anonymous; the refusal is recorded."""
    response = call_tool(client, "whoami", {}, headers={"Authorization": f"Bearer {token}"})
    assert_error(response, 401, errors.INVALID_REQUEST)
    value = challenge(response)
    assert f'resource_metadata="{METADATA}"' in value
    assert 'error="invalid_token"' in value
    recorder.flush()
    rows = RequestLog.objects.values_list("http_status", "error_code", "user")
    assert list(rows) == [(401, errors.INVALID_REQUEST, None)]


def post_async(name: str, headers: dict[str, str]) -> Any:
    """``tools/call name`` through Django's ASGI handler."""
    body = mcp_body("tools/call", {"name": name, "arguments": {}})
    return async_to_sync(AsyncClient().post)(
        "/mcp",
        json.dumps(body),
        content_type="application/json",
        headers={**mcp_headers(body), **headers},
    )


@pytest.mark.parametrize("gated", [False, True], ids=["on-the-loop", "in-the-view-thread"])
def test_a_foreign_bearer_token_is_refused_under_asgi_too(
    mcp_site: MCPSite, monkeypatch: pytest.MonkeyPatch, gated: bool
) -> None:
    """Through Django's ASGI handler, on both of its admission paths: on the event loop
    (nothing claims the request and no declaration is gated, so no thread is needed) and
    deferred to the view's thread (a gated declaration needs the caller's permissions)."""

    @mcp_site.tool
    def hello() -> str:
        return "hello"

    if gated:

        @mcp_site.tool(permission_required="books.view_book")
        def secret() -> str:
            return "secret"

    needs_thread: list[bool] = []
    original = middleware.admission_needs_thread

    def spy(*args: Any) -> bool:
        needs_thread.append(original(*args))
        return needs_thread[-1]

    monkeypatch.setattr(middleware, "admission_needs_thread", spy)
    response = post_async("hello", {"Authorization": "Bearer opaque-from-elsewhere"})
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert 'error="invalid_token"' in challenge(response)
    assert needs_thread == [gated]


def test_a_tab_after_the_scheme_still_presents_the_token(
    client: Client, auth_site: Any, issue: Callable[..., str], user: Any
) -> None:
    """HTTP separates a scheme from its credentials with spaces or tabs (RFC 9110 section
    5.6.3), and DRF's parser takes a tab: a token after a tab is a token, accepted when
    valid and refused when nobody accepts it."""
    response = call_tool(client, "whoami", {}, headers={"Authorization": "Bearer\tforeign"})
    assert_error(response, 401, errors.INVALID_REQUEST)
    token = issue()
    response = call_tool(client, "whoami", {}, headers={"Authorization": f"Bearer\t{token}"})
    assert text_of(response).startswith(f"token user:{user.pk}")


@pytest.mark.parametrize("token", ["mcp_\udc80abc", "mcp_caf\xe9"], ids=["surrogate", "latin-1"])
def test_a_token_that_is_not_ascii_is_refused_not_a_500(
    client: Client, auth_site: Any, token: str
) -> None:
    """RFC 6750 section 2.1: a bearer token is a b64token, ASCII. A header decoded as
    Latin-1 (as WSGI and ASGI servers decode header bytes) or, through the test client,
    a lone surrogate, is refused as invalid before any validator has to encode it."""
    response = call_tool(client, "whoami", {}, headers={"Authorization": f"Bearer {token}"})
    assert_error(response, 401, errors.INVALID_REQUEST)


@pytest.mark.parametrize("blank", ["\x0b", "\x0c"], ids=["VT", "FF"])
def test_whitespace_drf_splits_on_separates_a_token_too(
    client: Client, auth_site: Any, user: Any, blank: str
) -> None:
    """DRF splits the header on any ASCII whitespace: a vertical tab or form feed after
    ``Bearer`` must not hide a token from the refusal (the session beside it does not
    vouch for it)."""
    client.force_login(user)
    response = call_tool(client, "whoami", {}, headers={"Authorization": f"Bearer{blank}x"})
    assert_error(response, 401, errors.INVALID_REQUEST)


@pytest.mark.parametrize("blank", ["\xa0", "\x85", "\x1c"])
def test_no_other_blank_separates_a_token(
    client: Client, auth_site: Any, issue: Callable[..., str], blank: str
) -> None:
    """A no-break space (or another character Python counts as whitespace) is not an
    HTTP separator: ``Bearer<NBSP>mcp_...`` is no bearer header at all."""
    token = issue()
    header = f"Bearer{blank}{token}"
    response = call_tool(client, "whoami", {}, headers={"Authorization": header})
    assert text_of(response) == "anonymous anonymous -"


def test_the_refusal_names_the_scopes_the_site_needs(client: Client, auth_site: Any) -> None:
    """The 401's challenge SHOULD carry ``scope`` (basic/authorization.mdx, "Scope
    Selection Strategy"), so a client signing in again asks for enough."""
    response = call_tool(client, "whoami", {}, headers=bearer("opaque-from-elsewhere"))
    assert 'scope="books:read books:write prompts:use"' in challenge(response)


def test_a_session_does_not_vouch_for_a_bearer_token_beside_it(
    client: Client, auth_site: Any, user: Any, issue: Callable[..., str]
) -> None:
    """A signed-in browser session plus a token this server cannot validate is refused,
    as the token alone is, in either order of the authenticators: the session
    authenticator is not asked when a bearer token is presented."""
    client.force_login(user)
    response = call_tool(client, "whoami", {}, headers=bearer("opaque-from-elsewhere"))
    assert_error(response, 401, errors.INVALID_REQUEST)
    revoked = issue()
    AccessToken.objects.get(digest=digest(revoked)).revoke()
    session_first = [
        "django_mcp.auth.session.SessionAuthenticator",
        "django_mcp.auth.tokens.TokenAuthenticator",
    ]
    with override_mcp(AUTHENTICATORS=session_first):
        response = call_tool(client, "whoami", {}, headers=bearer(revoked))
        assert_error(response, 401, errors.INVALID_REQUEST)
        assert text_of(call_tool(client, "whoami", {})) == f"session user:{user.pk} -"


def test_other_schemes_are_not_bearer_tokens(client: Client, auth_site: Any) -> None:
    """``Basic`` (a staging site behind a proxy's password) is not a credential of this
    site: the request is anonymous."""
    response = call_tool(client, "whoami", {}, headers={"Authorization": "Basic YTpi"})
    assert text_of(response) == "anonymous anonymous -"


def test_with_no_authenticator_a_bearer_token_is_not_looked_at(
    client: Client, auth_site: Any
) -> None:
    """A site that checks no credentials at all (``AUTHENTICATORS`` empty) has no token to
    refuse: the request is anonymous."""
    with override_mcp(AUTHENTICATORS=[]):
        response = call_tool(client, "whoami", {}, headers=bearer("opaque-from-elsewhere"))
    assert text_of(response) == "anonymous anonymous -"


def test_discover_is_open_to_a_valid_token(
    client: Client, auth_site: Any, issue: Callable[..., str]
) -> None:
    result_of(mcp_post(client, "server/discover", headers=bearer(issue())))
