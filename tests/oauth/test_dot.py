"""A co-hosted django-oauth-toolkit authorization server (``testproject/oauth_server.py``)
and :class:`DOTAuthenticator`: the flow a standard 2026-07-28 MCP client runs
(``basic/authorization.mdx``; RFC 8414 metadata, PKCE S256, a client ID metadata document,
RFC 8707 ``resource``), then the MCP server validating the token it obtained."""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import AnonymousUser, User
from django.test import RequestFactory
from django.utils import timezone

from django_mcp.auth.base import AuthenticationFailed
from tests.oauth.conftest import bearer

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not getattr(django_settings, "OAUTH_SERVER", False),
        reason="django-oauth-toolkit is not installed (or DJANGO_MCP_OAUTH_SERVER=0)",
    ),
]

RESOURCE = "http://testserver/mcp"
CLIENT_ID = "https://client.example/oauth/client-metadata.json"
REDIRECT_URI = "http://127.0.0.1:3000/callback"
DOCUMENT = {
    "client_id": CLIENT_ID,
    "client_name": "Example MCP Client",
    "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}


class LocalFetcher:
    """Serves the client's metadata document without network (the default fetcher only
    reaches public https hosts); DOT still validates what it returns."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        from oauth2_provider.cimd import CIMDError

        if client_id != CLIENT_ID:
            raise CIMDError("unknown client")
        return dict(DOCUMENT), 300


@pytest.fixture
def mcp_oauth(settings: Any) -> None:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "OAUTH": {"RESOURCE": RESOURCE}}
    settings.OAUTH2_PROVIDER = {
        **settings.OAUTH2_PROVIDER,
        "CIMD_METADATA_FETCHER": "tests.oauth.test_dot.LocalFetcher",
    }


@pytest.fixture
def alice(db) -> User:
    return User.objects.create_user("alice", password="pw")


def authenticate(token: str):
    from django_mcp.auth.oauth.dot import DOTAuthenticator

    return DOTAuthenticator().authenticate(RequestFactory().post("/mcp", **bearer(token)))


def refused(token: str) -> AuthenticationFailed:
    with pytest.raises(AuthenticationFailed) as caught:
        authenticate(token)
    assert caught.value.error == "invalid_token"
    return caught.value


def make_token(user: User | None, **fields: Any):
    from oauth2_provider.models import get_access_token_model, get_application_model

    application = get_application_model().objects.create(
        name="app",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=REDIRECT_URI,
    )
    values = {
        "token": secrets.token_urlsafe(24),
        "expires": timezone.now() + timedelta(hours=1),
        "scope": "mcp books:write",
        "resource": [RESOURCE],
        **fields,
    }
    return get_access_token_model().objects.create(user=user, application=application, **values)


# -- DOTAuthenticator on tokens in DOT's tables --------------------------------------------


def test_a_valid_token_is_the_callers_user_and_scopes(mcp_oauth, alice):
    access_token = make_token(alice)
    caller = authenticate(access_token.token)
    assert caller.user == alice
    assert caller.scopes == frozenset({"mcp", "books:write"})
    assert caller.credential == f"dot:{access_token.pk}"
    assert caller.expires_at == access_token.expires.timestamp()  # ends its listen streams
    assert not caller.has_scopes({"admin"})  # insufficient scope: for the 403


def test_an_unknown_or_revoked_token_is_refused(mcp_oauth, alice):
    access_token = make_token(alice)
    access_token.revoke()
    assert "revoked" in refused(access_token.token).description


def test_a_revoked_token_is_revoked_for_the_tasks_it_queued(mcp_oauth, alice):
    """A task's run asks whether the DOT token that queued it still stands (ext-tasks
    ``tasks.md``, "Security Considerations"); DOT deletes a token it revokes."""
    from django_mcp.auth.revocation import is_revoked

    access_token = make_token(alice)
    credential = authenticate(access_token.token).credential
    assert not is_revoked(credential)
    access_token.revoke()
    assert is_revoked(credential)


def test_an_expired_token_is_refused(mcp_oauth, alice):
    access_token = make_token(alice, expires=timezone.now() - timedelta(seconds=1))
    assert "expired" in refused(access_token.token).description


@pytest.mark.parametrize("resource", [["https://other.example.com/mcp"], ["http://testserver"], []])
def test_a_token_for_another_or_no_resource_is_refused(mcp_oauth, alice, resource):
    """RFC 8707: DOT treats a token without ``resource`` as unrestricted; an MCP server
    accepts only tokens issued for itself."""
    assert "audience" in refused(make_token(alice, resource=resource).token).description


def test_an_inactive_user_is_refused(mcp_oauth, alice):
    access_token = make_token(alice)
    alice.is_active = False
    alice.save()
    refused(access_token.token)


def test_a_token_without_a_user_is_anonymous_with_scopes(mcp_oauth):
    caller = authenticate(make_token(None, scope="mcp").token)
    assert isinstance(caller.user, AnonymousUser)
    assert caller.scopes == frozenset({"mcp"})


def test_the_resource_validator_for_dots_own_views_matches_exactly():
    from django_mcp.auth.oauth.dot import resource_validator

    assert resource_validator("HTTP://TESTSERVER/mcp", [RESOURCE])
    assert not resource_validator("http://testserver/mcp/other", [RESOURCE])
    assert not resource_validator(RESOURCE, ["http://testserver"])


# -- The co-hosted authorization server, as an MCP client uses it --------------------------


def test_the_metadata_tells_an_mcp_client_what_it_needs(client, mcp_oauth):
    """RFC 8414 at the origin's root; PKCE support advertised (clients MUST refuse
    without ``code_challenge_methods_supported``), S256 only; CIMD supported; RFC 9207."""
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"] == "http://testserver"
    assert metadata["authorization_endpoint"] == "http://testserver/o/authorize/"
    assert metadata["token_endpoint"] == "http://testserver/o/token/"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert "registration_endpoint" not in metadata  # DCR is deprecated


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def authorize(client, challenge: str, resource: str = RESOURCE) -> str:
    """Run the authorization request as the signed-in user and return the code."""
    params = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT_URI,
        "scope": "mcp books:write",
        "state": "xyz",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": resource,
    }
    consent = client.get("/o/authorize/", params)
    assert consent.status_code == 200, consent.content
    form = {key: value for key, value in consent.context["form"].initial.items() if value}
    answer = client.post("/o/authorize/", {**form, "allow": True})
    assert answer.status_code == 302, answer.content
    location = urlsplit(answer["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT_URI
    query = parse_qs(location.query)
    assert query["state"] == ["xyz"]
    assert query["iss"] == ["http://testserver"]  # RFC 9207
    return query["code"][0]


def exchange(client, code: str, verifier: str, resource: str = RESOURCE):
    return client.post(
        "/o/token/",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
            "client_id": CLIENT_ID,
            "code_verifier": verifier,
            "resource": resource,
        },
    )


def test_the_full_flow_gives_a_token_the_mcp_server_accepts(client, mcp_oauth, alice):
    client.force_login(alice)
    verifier, challenge = pkce()
    answer = exchange(client, authorize(client, challenge), verifier)
    assert answer.status_code == 200, answer.content
    token = answer.json()
    assert token["token_type"] == "Bearer"
    caller = authenticate(token["access_token"])
    assert caller.user == alice
    assert caller.scopes == frozenset({"mcp", "books:write"})


def test_a_wrong_code_verifier_is_refused(client, mcp_oauth, alice):
    """PKCE (OAuth 2.1 section 4.1.3): a stolen code is useless without the verifier."""
    client.force_login(alice)
    _, challenge = pkce()
    answer = exchange(client, authorize(client, challenge), "x" * 64)
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_grant"


def test_the_plain_pkce_method_is_refused(client, mcp_oauth, alice):
    """OAuth 2.1 section 4.1.1: S256; the recipe's COMPLIANT_BCP_RFC9700_PKCE_METHOD makes
    DOT refuse "plain" when it would issue the code."""
    client.force_login(alice)
    verifier = "v" * 64
    answer = client.get(
        "/o/authorize/",
        {
            "response_type": "code",
            "client_id": CLIENT_ID,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": verifier,
            "code_challenge_method": "plain",
            "resource": RESOURCE,
        },
    )
    form = {key: value for key, value in answer.context["form"].initial.items() if value}
    refusal = client.post("/o/authorize/", {**form, "allow": True})
    assert refusal.status_code == 302
    assert parse_qs(urlsplit(refusal["Location"]).query)["error"] == ["invalid_request"]


def test_an_unregistered_redirect_uri_is_refused(client, mcp_oauth, alice):
    """The CIMD document's ``redirect_uris`` bind the client (exact match)."""
    client.force_login(alice)
    _, challenge = pkce()
    answer = client.get(
        "/o/authorize/",
        {
            "response_type": "code",
            "client_id": CLIENT_ID,
            "redirect_uri": "http://127.0.0.1:3000/elsewhere",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": RESOURCE,
        },
    )
    assert answer.status_code == 400


def test_a_token_obtained_for_another_resource_is_refused(client, mcp_oauth, alice):
    """RFC 8707: the client asked for a token for another server; ours refuses it."""
    client.force_login(alice)
    verifier, challenge = pkce()
    other = "https://other.example.com/mcp"
    answer = exchange(client, authorize(client, challenge, other), verifier, other)
    assert answer.status_code == 200, answer.content
    assert "audience" in refused(answer.json()["access_token"]).description
