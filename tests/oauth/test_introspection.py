"""Opaque tokens checked at an RFC 7662 introspection endpoint served on loopback
(``basic/authorization.mdx``: validate every request, only tokens issued for this server
(RFC 8707), 401 ``invalid_token`` otherwise (RFC 6750 section 3.1))."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User
from django.test import RequestFactory

from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.oauth.introspection import IntrospectionAuthenticator
from tests.oauth.conftest import CLIENT_SECRET, ISSUER, RESOURCE, bearer, configure

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(db):
    return User.objects.create_user("alice")


def answer(**claims):
    return {
        "active": True,
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "alice",
        "client_id": "mcp-client",
        "scope": "mcp books:read",
        "exp": int(time.time()) + 300,
        **claims,
    }


def authenticate(token: str):
    return IntrospectionAuthenticator().authenticate(RequestFactory().post("/mcp", **bearer(token)))


def refused(token: str) -> AuthenticationFailed:
    with pytest.raises(AuthenticationFailed) as caught:
        authenticate(token)
    assert caught.value.error == "invalid_token"
    return caught.value


def test_an_active_token_is_the_callers_user_and_scopes(
    authorization_server, oauth_settings, alice
):
    """RFC 7662 section 2.1: the token is POSTed with this server's client credentials."""
    exp = int(time.time()) + 120
    authorization_server.introspection["opaque-1"] = answer(jti="j-1", exp=exp)
    caller = authenticate("opaque-1")
    assert caller.user == alice
    assert caller.scopes == frozenset({"mcp", "books:read"})
    assert caller.credential == "introspected:j-1"
    assert caller.expires_at == exp  # what ends a listen stream it opens
    (sent,) = authorization_server.introspection_requests
    assert sent["form"] == {"token": "opaque-1", "token_type_hint": "access_token"}
    assert sent["authorization"].startswith("Basic ")


def test_an_inactive_token_is_refused(authorization_server, oauth_settings, alice):
    """RFC 7662 section 2.2: ``active: false`` for an unknown, revoked or expired token."""
    assert "not active" in refused("revoked-token").description


def test_active_must_be_true_not_truthy(authorization_server, oauth_settings, alice):
    authorization_server.introspection["odd"] = answer(active="yes")
    refused("odd")


def test_a_token_for_another_audience_is_refused(authorization_server, oauth_settings, alice):
    authorization_server.introspection["elsewhere"] = answer(aud="https://other.example.com")
    authorization_server.introspection["none"] = answer(aud=None)
    assert "audience" in refused("elsewhere").description
    assert "audience" in refused("none").description


def test_an_audience_array_or_resource_naming_us_is_accepted(
    authorization_server, oauth_settings, alice
):
    authorization_server.introspection["array"] = answer(aud=["https://x.example", RESOURCE])
    authorization_server.introspection["res"] = answer(aud=None, resource=RESOURCE)
    assert authenticate("array").user == alice
    assert authenticate("res").user == alice


def test_another_issuer_is_refused(authorization_server, oauth_settings, alice):
    authorization_server.introspection["other"] = answer(iss="https://evil.example.com")
    refused("other")


def test_an_expired_answer_is_refused(authorization_server, oauth_settings, alice):
    authorization_server.introspection["old"] = answer(exp=int(time.time()) - 600)
    assert "expired" in refused("old").description


def test_positive_answers_are_cached(authorization_server, oauth_settings, alice):
    authorization_server.introspection["cached"] = answer()
    authenticate("cached")
    authenticate("cached")
    assert len(authorization_server.introspection_requests) == 1


def test_the_cache_never_outlives_the_tokens_exp(authorization_server, oauth_settings, alice):
    """A token within the leeway of its ``exp`` is accepted but not cached, so the next
    request asks the authorization server again."""
    authorization_server.introspection["ending"] = answer(exp=int(time.time()) - 5)
    authenticate("ending")
    authenticate("ending")
    assert len(authorization_server.introspection_requests) == 2


def test_negative_answers_are_not_cached(authorization_server, oauth_settings, alice):
    refused("soon-valid")
    authorization_server.introspection["soon-valid"] = answer()
    assert authenticate("soon-valid").user == alice


def test_wrong_client_credentials_are_a_401_not_a_500(
    authorization_server, oauth_settings, settings, alice
):
    configure(settings, INTROSPECTION_CLIENT_SECRET=CLIENT_SECRET + "x")
    authorization_server.introspection["t"] = answer()
    assert "could not be introspected" in refused("t").description


def test_an_unreachable_or_broken_endpoint_is_a_401(
    authorization_server, oauth_settings, settings, alice
):
    authorization_server.broken = True
    refused("t")
    configure(settings, INTROSPECTION_URL="http://127.0.0.1:9/introspect")
    refused("t")


def test_a_cached_answer_expires_with_the_token(authorization_server, oauth_settings, alice):
    """The cache entry's lifetime is bounded by ``exp``: a token expiring in 10 s is not
    kept for INTROSPECTION_CACHE_SECONDS (60). (Not 2 s: ``exp`` is whole seconds, so
    an introspection taking about a second left no lifetime, and nothing was cached.)"""
    from django.core.cache import cache

    calls = []
    original = cache.set

    def spy(key, value, timeout=None, **kwargs):
        calls.append(timeout)
        return original(key, value, timeout, **kwargs)

    cache.set = spy
    try:
        authorization_server.introspection["short"] = answer(exp=int(time.time()) + 10)
        authenticate("short")
    finally:
        del cache.set
    assert len(calls) == 1
    assert calls[0] <= 10
