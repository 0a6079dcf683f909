"""JWT access tokens checked against a JWKS served on loopback (``basic/authorization.mdx``:
validate per OAuth 2.1 section 5.2 on every request, accept only tokens issued for this
server (RFC 8707), answer 401 ``invalid_token`` otherwise (RFC 6750 section 3.1))."""

from __future__ import annotations

import threading
import time
from typing import Any

import jwt
import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import RequestFactory

from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.oauth.jwt import JWTAuthenticator
from tests.oauth.conftest import ISSUER, RESOURCE, bearer, configure

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(db):
    return User.objects.create_user("alice")


@pytest.fixture
def served(authorization_server, oauth_settings, rsa_key, ec_key):
    authorization_server.jwks = {"keys": [rsa_key.jwk(), ec_key.jwk()]}
    return authorization_server


def authenticate(token: str):
    return JWTAuthenticator().authenticate(RequestFactory().post("/mcp", **bearer(token)))


def refused(token: str) -> AuthenticationFailed:
    with pytest.raises(AuthenticationFailed) as caught:
        authenticate(token)
    assert caught.value.error == "invalid_token"
    return caught.value


def test_a_valid_rs256_token_is_the_callers_user_and_scopes(served, alice, rsa_key):
    """RFC 9068: signature, issuer, audience and lifetime hold; ``scope`` is split on
    spaces and ``sub`` names the Django user."""
    token = rsa_key.mint(jti="token-1", exp=4102444800)
    caller = authenticate(token)
    assert caller.user == alice
    assert caller.scopes == frozenset({"mcp", "books:read"})
    assert caller.credential == "jwt:token-1"
    assert caller.method == "oauth"
    assert caller.expires_at == 4102444800  # what ends a listen stream it opens


def test_es256_and_an_scp_list(served, alice, ec_key):
    caller = authenticate(ec_key.mint(scope=None, scp=["mcp", "books:write"]))
    assert caller.scopes == frozenset({"mcp", "books:write"})


def test_insufficient_scope_shows_in_the_callers_scopes(served, alice, rsa_key):
    """RFC 6750 section 3.1: a valid token lacking a scope is not a 401; the Caller carries
    the granted scopes so the operation can answer 403 insufficient_scope."""
    caller = authenticate(rsa_key.mint(scope="mcp"))
    assert caller.has_scopes({"mcp"})
    assert not caller.has_scopes({"mcp", "books:write"})


def test_no_bearer_token_is_not_this_authenticators_business(served):
    factory = RequestFactory()
    assert JWTAuthenticator().authenticate(factory.post("/mcp")) is None
    basic = factory.post("/mcp", HTTP_AUTHORIZATION="Basic YTpi")
    assert JWTAuthenticator().authenticate(basic) is None
    # An opaque token is left to an introspection or DOT authenticator.
    assert authenticate("opaque-token-value") is None


def test_a_token_in_the_query_string_is_ignored(served, rsa_key):
    """``basic/authorization.mdx``: access tokens MUST NOT be read from the query string."""
    request = RequestFactory().post(f"/mcp?access_token={rsa_key.mint()}")
    assert JWTAuthenticator().authenticate(request) is None


def test_a_malformed_bearer_header_is_refused(served):
    with pytest.raises(AuthenticationFailed):
        JWTAuthenticator().authenticate(
            RequestFactory().post("/mcp", HTTP_AUTHORIZATION="Bearer two tokens")
        )


def test_an_expired_token_is_refused(served, alice, rsa_key):
    now = int(time.time())
    assert "expired" in refused(rsa_key.mint(iat=now - 600, exp=now - 120)).description


def test_small_clock_skew_is_tolerated(served, alice, rsa_key):
    """LEEWAY_SECONDS (30 by default) absorbs clock skew between the two servers."""
    now = int(time.time())
    assert authenticate(rsa_key.mint(exp=now - 10)).user == alice


def test_a_token_without_exp_is_refused(served, alice, rsa_key):
    refused(rsa_key.mint(exp=None))


def test_a_token_not_yet_valid_is_refused(served, alice, rsa_key):
    now = int(time.time())
    refused(rsa_key.mint(nbf=now + 600))
    refused(rsa_key.mint(iat=now + 600))


def test_a_token_from_another_issuer_is_refused(served, alice, rsa_key):
    refused(rsa_key.mint(iss="https://evil.example.com"))


@pytest.mark.parametrize(
    "audience",
    [
        "https://other.example.com/mcp",
        "https://mcp.example.com",  # a prefix of ours: not a token for /mcp
        "https://mcp.example.com/mcp/other",
        ["https://other.example.com"],
        None,
    ],
)
def test_a_token_for_another_audience_is_refused(served, alice, rsa_key, audience):
    """RFC 8707 and ``basic/authorization.mdx``: only tokens issued for this server."""
    assert "audience" in refused(rsa_key.mint(aud=audience)).description


@pytest.mark.parametrize(
    "claims",
    [
        {"aud": ["https://other.example.com", RESOURCE]},
        {"aud": "HTTPS://MCP.EXAMPLE.COM/mcp"},  # scheme and host are case-insensitive
        {"aud": RESOURCE + "/"},
        {"aud": None, "resource": RESOURCE},
    ],
)
def test_the_audience_may_be_an_array_a_variant_or_a_resource_claim(served, alice, rsa_key, claims):
    assert authenticate(rsa_key.mint(**claims)).user == alice


def test_a_bad_signature_is_refused(served, alice, rsa_key, rotated_key):
    """A token signed by another key that claims our key id."""
    forged = rotated_key.mint(headers={"kid": rsa_key.kid})
    assert "signature is invalid" in refused(forged).description


def test_a_tampered_payload_is_refused(served, alice, rsa_key):
    header, _, signature = rsa_key.mint().split(".")
    other = rsa_key.mint(sub="root").split(".")[1]
    refused(f"{header}.{other}.{signature}")


def test_a_symmetric_algorithm_is_refused(served, alice, rsa_key):
    """Algorithm confusion: an HS256 token keyed with the public JWKS must not pass."""
    token = jwt.encode(
        {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "exp": int(time.time()) + 60},
        "public-material-known-to-everyone-32b",
        algorithm="HS256",
        headers={"kid": rsa_key.kid},
    )
    assert "algorithm" in refused(token).description


def test_keys_are_cached_between_requests(served, alice, rsa_key):
    for _ in range(3):
        authenticate(rsa_key.mint())
    assert served.jwks_requests == 1


def test_an_unknown_kid_refetches_once_and_finds_the_rotated_key(
    served, alice, rsa_key, rotated_key
):
    """Key rotation: a token signed with a key published after the JWKS was cached is
    accepted after one refetch."""
    authenticate(rsa_key.mint())
    served.jwks = {"keys": [rsa_key.jwk(), rotated_key.jwk()]}
    assert authenticate(rotated_key.mint()).user == alice
    assert served.jwks_requests == 2


def test_a_flood_of_unknown_kids_does_not_hammer_the_jwks_endpoint(
    served, alice, rsa_key, rotated_key
):
    """Refetches for unknown kids are limited to one per JWKS_MIN_REFETCH_SECONDS."""
    authenticate(rsa_key.mint())
    for number in range(20):
        refused(rotated_key.mint(headers={"kid": f"made-up-{number}"}))
    assert served.jwks_requests == 2  # the first fetch and one refetch, not 21


def test_an_unreachable_jwks_is_a_401_not_a_500(served, settings, alice, rsa_key):
    configure(settings, JWKS_URL="http://127.0.0.1:9/jwks.json")
    assert "unavailable" in refused(rsa_key.mint()).description


def test_a_broken_jwks_answer_is_a_401(served, alice, rsa_key):
    served.broken = True
    assert "unavailable" in refused(rsa_key.mint()).description


def test_an_unknown_user_is_refused_unless_users_are_created(served, settings, rsa_key):
    assert "unknown" in refused(rsa_key.mint(sub="bob")).description
    configure(settings, CREATE_USERS=True)
    caller = authenticate(rsa_key.mint(sub="bob"))
    assert caller.user.username == "bob"
    assert not caller.user.has_usable_password()
    assert authenticate(rsa_key.mint(sub="bob")).user == caller.user


def test_the_user_claim_and_field_are_configurable(served, settings, rsa_key):
    user = User.objects.create_user("carol", email="carol@example.com")
    configure(settings, USER_CLAIM="email", USER_FIELD="email")
    assert authenticate(rsa_key.mint(email="carol@example.com")).user == user


def test_a_users_token_without_the_user_claim_is_refused_not_taken_for_its_client(
    served, settings, rsa_key
):
    """With USER_CLAIM "email", a user's token (``sub`` alice) that lacks ``email`` was taken
    for a token acting for no user: every such user of the client shared one principal,
    their tasks and cursors included."""
    configure(settings, USER_CLAIM="email", USER_FIELD="email")
    assert "'email' claim" in refused(rsa_key.mint(client_id="app")).description


def test_a_client_credentials_token_whose_sub_is_its_client_acts_for_no_user(served, rsa_key):
    """RFC 9068 section 2.2: ``sub`` is REQUIRED; a token acting for no user names its
    client there. It was refused as an unknown user."""
    caller = authenticate(rsa_key.mint(sub="reporting", client_id="reporting", scope="mcp"))
    assert isinstance(caller.user, AnonymousUser)
    assert caller.principal == "client:reporting"


def test_an_inactive_user_is_refused(served, alice, rsa_key):
    alice.is_active = False
    alice.save()
    assert "inactive" in refused(rsa_key.mint()).description


def test_a_token_for_no_user_is_anonymous_with_its_scopes(served, rsa_key):
    """A client_credentials token has no subject: the client acts for itself."""
    caller = authenticate(rsa_key.mint(sub=None, scope="mcp"))
    assert isinstance(caller.user, AnonymousUser)
    assert caller.scopes == frozenset({"mcp"})


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def key_set_on(authorization_server: Any, rsa_key: Any) -> tuple[Any, FakeClock]:
    """A KeySet of the stub server serving ``rsa_key`` (max age 300 s, refetches 30 s
    apart), on a clock the test moves."""
    from django_mcp.auth.oauth.jwks import KeySet

    authorization_server.jwks = {"keys": [rsa_key.jwk()]}
    clock = FakeClock()
    keys = KeySet(
        authorization_server.jwks_url, max_age=300, min_refetch_interval=30, timeout=5, clock=clock
    )
    return keys, clock


def test_the_key_set_is_refetched_after_its_max_age_and_kept_when_that_fails(
    authorization_server, rsa_key
):
    """JWKS_CACHE_SECONDS bounds how long keys are trusted without asking again; a failed
    refresh keeps the last good keys rather than refusing every token."""
    keys, clock = key_set_on(authorization_server, rsa_key)
    assert keys.key_for(rsa_key.kid).key_id == rsa_key.kid
    clock.now += 299
    keys.key_for(rsa_key.kid)
    assert authorization_server.jwks_requests == 1
    clock.now += 1
    keys.key_for(rsa_key.kid)
    assert authorization_server.jwks_requests == 2
    authorization_server.broken = True
    clock.now += 300
    assert keys.key_for(rsa_key.kid).key_id == rsa_key.kid
    assert authorization_server.jwks_requests == 3


def test_a_jwks_endpoint_that_is_down_is_asked_once_per_interval(authorization_server, rsa_key):
    """Once the set was stale, a failed refresh did not record an attempt, so every token
    asked the endpoint again, one at a time under the lock (each waiting up to the HTTP
    timeout for one that hangs)."""
    keys, clock = key_set_on(authorization_server, rsa_key)
    keys.key_for(rsa_key.kid)
    authorization_server.broken = True
    clock.now += 301
    for _ in range(20):
        assert keys.key_for(rsa_key.kid).key_id == rsa_key.kid  # the last good set
    assert authorization_server.jwks_requests == 2
    clock.now += 30
    keys.key_for(rsa_key.kid)
    assert authorization_server.jwks_requests == 3


def test_an_unknown_kid_right_after_a_failed_refresh_asks_no_second_time(
    authorization_server, rsa_key
):
    """The rotation refetch for an unknown ``kid`` came straight after the stale set's
    failed refresh: two requests to an endpoint that is down, each up to the timeout."""
    keys, clock = key_set_on(authorization_server, rsa_key)
    keys.key_for(rsa_key.kid)
    authorization_server.broken = True
    clock.now += 301
    for _ in range(5):
        with pytest.raises(AuthenticationFailed):
            keys.key_for("made-up")
    assert authorization_server.jwks_requests == 2


def test_unknown_kid_refetches_resume_after_the_interval(authorization_server, rsa_key):
    keys, clock = key_set_on(authorization_server, rsa_key)
    for _ in range(3):
        with pytest.raises(AuthenticationFailed):
            keys.key_for("unknown")
    assert authorization_server.jwks_requests == 2
    clock.now += 30
    with pytest.raises(AuthenticationFailed):
        keys.key_for("unknown")
    assert authorization_server.jwks_requests == 3


def in_thread(function: Any, *args: Any) -> tuple[threading.Thread, list[Any]]:
    """``function(*args)`` started in a thread; its outcome (value or exception) lands in
    the returned list."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(function(*args))
        except Exception as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_a_known_key_is_used_while_a_rotation_check_hangs(authorization_server, rsa_key):
    """A token with a made-up ``kid`` sends the key set to the JWKS endpoint (a rotation
    check). That fetch ran under the key set's lock, so every other JWT request of the
    process, with a key the cache holds, waited for it: up to HTTP_TIMEOUT_SECONDS for an
    endpoint that hangs, once per JWKS_MIN_REFETCH_SECONDS, at an attacker's choosing.
    (basic/authorization.mdx: the server validates the token; nothing says it must wait.)"""
    keys, _ = key_set_on(authorization_server, rsa_key)
    keys.key_for(rsa_key.kid)
    authorization_server.hang = True
    rotation, rotation_outcome = in_thread(keys.key_for, "made-up")
    try:
        assert authorization_server.jwks_asked.wait(5)
        known, known_outcome = in_thread(keys.key_for, rsa_key.kid)
        known.join(5)
        assert known_outcome
        assert known_outcome[0].key_id == rsa_key.kid
        assert rotation.is_alive()  # the rotation check still hangs
    finally:
        authorization_server.release.set()
        rotation.join(5)
    assert isinstance(rotation_outcome[0], AuthenticationFailed)
    assert authorization_server.jwks_requests == 2


def test_a_stale_set_serves_known_keys_while_one_thread_refreshes_it(authorization_server, rsa_key):
    """Past JWKS_CACHE_SECONDS one caller fetches the set again; the others verify with the
    keys they have instead of queueing behind that fetch, and do not fetch themselves."""
    keys, clock = key_set_on(authorization_server, rsa_key)
    keys.key_for(rsa_key.kid)
    clock.now += 301
    authorization_server.hang = True
    refresher, refresher_outcome = in_thread(keys.key_for, rsa_key.kid)
    try:
        assert authorization_server.jwks_asked.wait(5)
        others = [in_thread(keys.key_for, rsa_key.kid) for _ in range(5)]
        for thread, outcome in others:
            thread.join(5)
            assert outcome
            assert outcome[0].key_id == rsa_key.kid
    finally:
        authorization_server.release.set()
        refresher.join(5)
    assert refresher_outcome[0].key_id == rsa_key.kid
    assert authorization_server.jwks_requests == 2


def test_callers_with_no_key_wait_for_the_one_fetch(authorization_server, rsa_key):
    """Before the first set arrives nobody has a key: every caller waits for the one fetch
    in flight and then uses its keys; the endpoint is asked once."""
    keys, _ = key_set_on(authorization_server, rsa_key)
    authorization_server.hang = True
    first, first_outcome = in_thread(keys.key_for, rsa_key.kid)
    assert authorization_server.jwks_asked.wait(5)
    waiting = [in_thread(keys.key_for, rsa_key.kid) for _ in range(3)]
    authorization_server.release.set()
    for thread, outcome in [(first, first_outcome), *waiting]:
        thread.join(5)
        assert outcome
        assert outcome[0].key_id == rsa_key.kid
    assert authorization_server.jwks_requests == 1


@pytest.mark.parametrize(
    ("typ", "accepted"),
    [
        ("at+jwt", True),
        ("application/AT+JWT", True),  # media types compare without case (RFC 7515 4.1.9)
        ("JWT", False),  # an ID token, say, signed by the same issuer
        (None, False),
    ],
)
def test_token_types_requires_an_access_tokens_typ(served, alice, rsa_key, settings, typ, accepted):
    """RFC 9068 section 4: the resource server MUST check that ``typ`` is ``at+jwt`` (or
    ``application/at+jwt``). Many authorization servers send ``JWT``, so the check is
    opt-in: ``TOKEN_TYPES = ["at+jwt"]``. Without it any ``typ`` passes."""
    token = rsa_key.mint(headers={"typ": typ} if typ else None)
    if typ is None:  # PyJWT writes typ "JWT" unless told otherwise
        token = rsa_key.mint(headers={"typ": None})
    assert authenticate(token).user == alice  # no TOKEN_TYPES: any typ
    configure(settings, TOKEN_TYPES=["at+jwt"])
    if accepted:
        assert authenticate(token).user == alice
    else:
        assert "not an access token" in refused(token).description
