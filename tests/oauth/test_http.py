"""The OAuth validators in ``AUTHENTICATORS``, through the real HTTP stack (Django's test
client, the middleware, the view): the same 401 ``invalid_token`` challenge as the access
token authenticator, naming the protected resource metadata (basic/authorization.mdx,
"Error Handling" and "Token Validation"; RFC 6750 section 3; RFC 9728 section 5.1), the
scopes they grant gating tools, no database or thread for a request without a bearer
token, and checks ``django_mcp.E012`` for a validator listed without its settings and
``django_mcp.W014`` for one listed while the metadata names no authorization server."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core import checks
from django.core.cache import caches
from django.test import RequestFactory

from django_mcp import Context
from django_mcp.auth import resolve
from django_mcp.auth.metadata import description_text
from django_mcp.auth.oauth.config import oauth_config
from django_mcp.auth.oauth.introspection import IntrospectionAuthenticator
from django_mcp.auth.oauth.jwt import JWTAuthenticator
from django_mcp.http.auth import protected_resource_urls
from django_mcp.protocol import errors
from tests import urls as test_urls
from tests.helpers import assert_error, call_tool, result_of
from tests.oauth.conftest import RESOURCE, configure

if TYPE_CHECKING:
    from django.test import Client

    from django_mcp.sites import MCPSite
    from tests.oauth.conftest import SigningKey, StubAuthorizationServer

pytestmark = pytest.mark.django_db

JWT = "django_mcp.auth.oauth.jwt.JWTAuthenticator"
INTROSPECTION = "django_mcp.auth.oauth.introspection.IntrospectionAuthenticator"
DOT = "django_mcp.auth.oauth.dot.DOTAuthenticator"
#: The metadata of RESOURCE: DJANGO_MCP["RESOURCE"] is unset, so the OAuth audience names it.
METADATA = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
#: An introspection answer: an active token of alice's, for this resource, granting the
#: scope the ``write`` tool needs.
ALICE_MAY_WRITE = {"active": True, "aud": RESOURCE, "sub": "alice", "scope": "books:write"}


@pytest.fixture
def site(mcp_site: MCPSite) -> MCPSite:
    @mcp_site.tool
    def whoami(ctx: Context) -> str:
        """Open to all."""
        scopes = "-" if ctx.scopes is None else " ".join(sorted(ctx.scopes))
        return f"{ctx.caller.method} {ctx.principal} {scopes}"

    @mcp_site.tool(scopes_required="books:write")
    def write() -> str:
        """Needs books:write."""
        return "written"

    test_urls.urlpatterns.extend(protected_resource_urls("mcp", mcp_site))
    return mcp_site


@pytest.fixture
def alice(db: Any) -> User:
    return User.objects.create_user("alice")


def use(settings: Any, *paths: str, **values: Any) -> None:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "AUTHENTICATORS": list(paths), **values}


@pytest.fixture
def jwt_server(
    settings: Any, authorization_server: StubAuthorizationServer, oauth_settings: Any, rsa_key: Any
) -> StubAuthorizationServer:
    authorization_server.jwks = {"keys": [rsa_key.jwk()]}
    use(settings, JWT, INTROSPECTION)
    return authorization_server


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_jwt_with_the_scope_calls_the_gated_tool(
    client: Client, site: MCPSite, jwt_server: Any, alice: User, rsa_key: SigningKey
) -> None:
    token = rsa_key.mint(scope="mcp books:write")
    assert result_of(call_tool(client, "write", {}, headers=bearer(token)))["content"][0][
        "text"
    ] == ("written")
    who = result_of(call_tool(client, "whoami", {}, headers=bearer(token)))
    assert who["content"][0]["text"] == f"oauth user:{alice.pk} books:write mcp"


def test_a_jwt_without_the_scope_is_a_403_insufficient_scope(
    client: Client, site: MCPSite, jwt_server: Any, alice: User, rsa_key: SigningKey
) -> None:
    """basic/authorization.mdx, "Runtime Insufficient Scope Errors"."""
    response = call_tool(client, "write", {}, headers=bearer(rsa_key.mint(scope="mcp")))
    assert_error(response, 403, errors.INVALID_REQUEST)
    assert 'error="insufficient_scope"' in response["WWW-Authenticate"]


def test_a_jwt_for_another_audience_gets_the_invalid_token_challenge(
    client: Client, site: MCPSite, jwt_server: Any, alice: User, rsa_key: SigningKey
) -> None:
    """RFC 8707 and RFC 6750 section 3.1: the same 401 as an unknown access token, with
    ``resource_metadata`` (RFC 9728 section 5.1) and ``error="invalid_token"``."""
    token = rsa_key.mint(aud="https://other.example/mcp")
    response = call_tool(client, "whoami", {}, headers=bearer(token))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert response["WWW-Authenticate"] == (
        f'Bearer resource_metadata="{METADATA}", scope="books:write", error="invalid_token", '
        'error_description="The token was not issued for this resource (audience)."'
    )
    document = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert document["resource"] == RESOURCE  # the audience the validators accept


def test_an_opaque_token_goes_to_introspection_after_the_jwt_validator(
    client: Client, site: MCPSite, jwt_server: StubAuthorizationServer, alice: User
) -> None:
    jwt_server.introspection["opaque-1"] = ALICE_MAY_WRITE
    assert result_of(call_tool(client, "write", {}, headers=bearer("opaque-1")))
    response = call_tool(client, "write", {}, headers=bearer("opaque-2"))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert response["WWW-Authenticate"].count("Bearer") == 1  # one challenge, not one each


def unsigned_jwt(header: dict[str, Any]) -> str:
    """A token with ``header`` and no valid signature: what anyone can send."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part(header)}.{part({})}.c2ln"


@pytest.mark.parametrize("crit", ["x\ry", "x\u2028y", 'say "hi" \\ bye'])
def test_attacker_text_in_a_jwt_header_never_reaches_the_challenge(
    client: Client, site: MCPSite, jwt_server: Any, crit: str
) -> None:
    """RFC 6750 section 3: ``error_description`` holds visible ASCII without ``"`` or
    ``\\``. PyJWT's message quotes the unsigned header's ``crit``: a carriage return in it
    made Django refuse the header (a 500), and a non-ASCII character had the whole
    challenge MIME-encoded, hiding ``resource_metadata`` from clients."""
    token = unsigned_jwt({"alg": "RS256", "kid": "rsa-1", "crit": [crit]})
    response = call_tool(client, "whoami", {}, headers=bearer(token))
    assert_error(response, 401, errors.INVALID_REQUEST)
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith(f'Bearer resource_metadata="{METADATA}"')
    assert challenge.isascii()
    assert "\r" not in challenge
    assert "\\" not in challenge  # nothing escaped: no '"' or '\\' in a description
    assert crit not in challenge


def test_a_description_is_made_fit_for_a_challenge() -> None:
    assert description_text('bad "detail" \\ é\r\n') == "bad 'detail' / ???"


@pytest.mark.parametrize("how", ["bearer", "basic"])
def test_failed_sign_ins_count_against_the_address_limit(
    client: Client, site: MCPSite, jwt_server: Any, settings: Any, how: str
) -> None:
    """Failed authentication returned its 401 before any limit counted it, so guesses
    (tokens, or passwords through DRF's BasicAuthentication) were never limited."""
    User.objects.create_user("bob", password="correct horse")
    if how == "basic":
        use(settings, "django_mcp.auth.drf.DRFAuthenticator", RATE_LIMIT_IP="3/m")
    else:
        settings.DJANGO_MCP = {**settings.DJANGO_MCP, "RATE_LIMIT_IP": "3/m"}
    cache = caches["default"]
    cache.clear()
    statuses = []
    for attempt in range(5):
        secret = base64.b64encode(f"bob:guess{attempt}".encode()).decode()
        header = f"Basic {secret}" if how == "basic" else f"Bearer guess-{attempt}"
        response = call_tool(client, "whoami", {}, headers={"Authorization": header})
        statuses.append(response.status_code)
    assert statuses == [401, 401, 401, 429, 429]


def test_a_cached_introspection_answer_is_checked_again_on_use(
    client: Client, site: MCPSite, jwt_server: StubAuthorizationServer, alice: User, settings: Any
) -> None:
    """RFC 8707: only tokens issued for this server. A cached answer skipped the audience
    and issuer checks, so a token another service sharing the cache accepted, or one this
    server accepted before its settings changed, went through."""
    caches["default"].clear()
    jwt_server.introspection["opaque"] = ALICE_MAY_WRITE
    assert result_of(call_tool(client, "write", {}, headers=bearer("opaque")))
    configure(settings, RESOURCE="https://other.example.com/mcp")
    response = call_tool(client, "write", {}, headers=bearer("opaque"))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert "(audience)" in response["WWW-Authenticate"]


def test_a_token_acting_for_no_user_may_do_what_its_scopes_allow(
    client: Client, site: MCPSite, jwt_server: Any, rsa_key: SigningKey
) -> None:
    """RFC 6750 section 3.1: a 401 is for a missing or invalid token, a 403 for one that
    lacks a scope. A valid ``client_credentials`` token (no ``sub``) holding the tool's
    scope got a 401, which sent its client to sign in again for a scope it already had."""
    token = rsa_key.mint(sub=None, scope="mcp books:write", client_id="reporting")
    assert result_of(call_tool(client, "write", {}, headers=bearer(token)))
    me = result_of(call_tool(client, "whoami", {}, headers=bearer(token)))
    assert me["content"][0]["text"] == "oauth client:reporting books:write mcp"
    lacking = call_tool(client, "write", {}, headers=bearer(rsa_key.mint(sub=None)))
    assert_error(lacking, 403, errors.INVALID_REQUEST)
    assert 'error="insufficient_scope"' in lacking["WWW-Authenticate"]


def test_the_per_user_rate_limit_counts_a_client_acting_for_itself_across_its_tokens(
    client: Client, site: MCPSite, jwt_server: Any, rsa_key: SigningKey, settings: Any
) -> None:
    """server/tools.mdx, "Security Considerations": servers MUST rate-limit tool
    invocations. A ``client_credentials`` client is one party, but each token it mints is
    a new credential to the per-token limit and it has no user: it escaped
    ``RATE_LIMIT_USER`` by minting a token per request. It is counted by its principal."""
    caches["default"].clear()
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "RATE_LIMIT_USER": "2/h"}

    def call_with_a_new_token(client_id: str) -> Any:
        token = rsa_key.mint(sub=None, scope="mcp books:write", client_id=client_id)
        return call_tool(client, "whoami", {}, headers=bearer(token))

    try:
        assert result_of(call_with_a_new_token("reporting"))
        assert result_of(call_with_a_new_token("reporting"))
        limited = call_with_a_new_token("reporting")
        assert_error(limited, 429, errors.RATE_LIMITED)
        assert result_of(call_with_a_new_token("billing"))  # another client: its own count
    finally:
        caches["default"].clear()


def test_a_token_acting_for_no_user_is_signed_in_where_the_site_requires_it(
    client: Client, site: MCPSite, jwt_server: Any, rsa_key: SigningKey, settings: Any
) -> None:
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUIRE_AUTHENTICATION": True}
    token = rsa_key.mint(sub=None, scope="mcp")
    assert result_of(call_tool(client, "whoami", {}, headers=bearer(token)))
    assert call_tool(client, "whoami", {}).status_code == 401


def test_a_malformed_bearer_header_is_a_401_not_anonymous(
    client: Client, site: MCPSite, jwt_server: Any
) -> None:
    response = call_tool(client, "whoami", {}, headers={"Authorization": "Bearer a b"})
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_without_a_bearer_token_no_validator_runs(
    client: Client, site: MCPSite, jwt_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request without credentials is anonymous without running any validator, so under
    ASGI it stays on the event loop (``has_credentials`` decides from headers alone)."""

    def forbidden(self: Any, request: Any) -> None:
        raise AssertionError(f"{type(self).__name__}.authenticate ran without a token")

    monkeypatch.setattr(JWTAuthenticator, "authenticate", forbidden)
    monkeypatch.setattr(IntrospectionAuthenticator, "authenticate", forbidden)
    who = result_of(call_tool(client, "whoami", {}))
    assert who["content"][0]["text"] == "anonymous anonymous -"
    basic = call_tool(client, "whoami", {}, headers={"Authorization": "Basic YTpi"})
    assert result_of(basic)["content"][0]["text"] == "anonymous anonymous -"


@pytest.mark.parametrize(
    ("paths", "header", "expected"),
    [
        ([JWT], None, False),
        ([JWT], "Basic YTpi", False),
        ([JWT], "Bearer opaque", False),  # not a JWT: left to another authenticator
        ([JWT], "Bearer a.b.c", True),
        ([JWT], "Bearer a b", True),  # malformed: refused by the validator, not ignored
        ([INTROSPECTION], "Bearer opaque", True),
        ([INTROSPECTION], None, False),
        ([DOT], "bearer opaque", True),
        ([DOT], "Basic YTpi", False),
    ],
)
def test_has_credentials_reads_the_header_only(
    settings: Any, paths: list[str], header: str | None, expected: bool
) -> None:
    if paths == [DOT] and not getattr(django_settings, "OAUTH_SERVER", False):
        pytest.skip("django-oauth-toolkit is not installed")
    use(settings, *paths)
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}
    assert resolve.has_credentials(RequestFactory().post("/mcp", **extra)) is expected


# -- RESOURCE, set once, and check E012 ----------------------------------------------------


def e012(settings: Any, paths: list[str], oauth: dict[str, Any], **values: Any) -> list[str]:
    use(settings, *paths, OAUTH=oauth, **values)
    return [m.msg for m in checks.run_checks() if m.id == "django_mcp.E012"]


def test_e012_names_the_missing_jwt_settings(settings: Any) -> None:
    (message,) = e012(settings, [JWT], {"RESOURCE": RESOURCE})
    assert "JWTAuthenticator" in message
    assert "OAUTH['JWKS_URL'], OAUTH['ISSUER']" in message


def test_e012_names_a_missing_introspection_url_and_resource(settings: Any) -> None:
    (message,) = e012(settings, [INTROSPECTION], {})
    assert "OAUTH['RESOURCE'], OAUTH['INTROSPECTION_URL']" in message


def test_a_top_level_resource_is_the_audience(settings: Any) -> None:
    """One canonical URI for the metadata and the audience: set once, used by both."""
    complete = {"ISSUER": "https://as.example", "JWKS_URL": "https://as.example/jwks"}
    assert e012(settings, [JWT], complete, RESOURCE=RESOURCE) == []
    assert oauth_config().resources == frozenset({RESOURCE})


def test_e012_when_the_metadata_names_another_resource_than_the_audience(settings: Any) -> None:
    oauth = {"RESOURCE": RESOURCE, "INTROSPECTION_URL": "https://as/i"}
    oauth["INTROSPECTION_CLIENT_ID"] = "rs"
    (message,) = e012(settings, [INTROSPECTION], oauth, RESOURCE="https://other.example/mcp")
    assert "not among OAUTH['RESOURCE']" in message
    assert e012(settings, [INTROSPECTION], oauth, RESOURCE=RESOURCE + "/") == []


def test_no_e012_without_an_oauth_authenticator(settings: Any) -> None:
    assert e012(settings, ["django_mcp.auth.tokens.TokenAuthenticator"], {}) == []


# -- check W014: metadata naming no authorization server -------------------------------------


def w014(settings: Any, paths: list[str], servers: list[str]) -> list[str]:
    use(settings, *paths, AUTHORIZATION_SERVERS=servers)
    return [m.msg for m in checks.run_checks() if m.id == "django_mcp.W014"]


@pytest.mark.parametrize("validator", [JWT, INTROSPECTION, DOT])
def test_w014_an_oauth_validator_with_no_authorization_server(
    settings: Any, validator: str
) -> None:
    """basic/authorization.mdx: the protected resource metadata MUST name at least one
    authorization server; with none, a client that starts from a 401 cannot get a token."""
    (message,) = w014(settings, [validator], [])
    assert validator in message
    assert "AUTHORIZATION_SERVERS" in message


def test_no_w014_once_an_authorization_server_is_named(settings: Any) -> None:
    assert w014(settings, [DOT], ["https://mcp.example.com"]) == []


def test_no_w014_without_an_oauth_validator(settings: Any) -> None:
    """Project tokens need no authorization server: nothing to discover."""
    assert w014(settings, ["django_mcp.auth.tokens.TokenAuthenticator"], []) == []
