"""django-oauth-toolkit's DRF class (``OAuth2Authentication``) run by
:class:`~django_mcp.auth.drf.DRFAuthenticator`, through the real HTTP stack: a DOT token
that comes in this way is checked and described as :class:`DOTAuthenticator` does.

basic/authorization.mdx, "Token Audience Binding and Validation": an MCP server MUST
validate that a token was issued for it (RFC 8707) and MUST NOT accept any other. DOT's
DRF class checks a token's ``resource`` only against the request's URL (by prefix, as it
comes) and takes one with no ``resource`` as unrestricted; the bridge served such
tokens, with no scope limit (the caller passed every ``scopes_required``) and a credential
that revocation re-checks did not read."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from django_mcp import Context
from django_mcp.protocol import errors
from tests.helpers import assert_error, call_tool, error_of, post_raw, result_of
from tests.oauth import test_dot, test_http
from tests.oauth.test_dot import RESOURCE, make_token

pytestmark = test_dot.pytestmark  # the database; skipped without django-oauth-toolkit
site = test_http.site  # the OAuth tests' site: whoami, and write (needs books:write)

DRF = "django_mcp.auth.drf.DRFAuthenticator"
DOT = "django_mcp.auth.oauth.dot.DOTAuthenticator"
DOTS_DRF_CLASS = "oauth2_provider.contrib.rest_framework.OAuth2Authentication"


def use(settings: Any, authenticator: str = DRF, **values: Any) -> None:
    """``authenticator`` alone (DRF's: with DOT's DRF class only), ``RESOURCE`` the audience."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "AUTHENTICATORS": [authenticator],
        "DRF_AUTHENTICATION_CLASSES": [DOTS_DRF_CLASS],
        "OAUTH": {"RESOURCE": RESOURCE},
        **values,
    }


@pytest.fixture
def dot_site(site: Any, settings: Any) -> Any:
    """The OAuth tests' site, with a tool naming the caller's credential, behind DOT's DRF
    class."""

    @site.tool
    def credential(ctx: Context) -> str:
        return str(ctx.caller.credential)

    use(settings)
    return site


@pytest.fixture
def alice(db: Any) -> User:
    return User.objects.create_user("alice", password="pw")


def bearer(token: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {token.token}"}


def text_of(response: Any) -> str:
    return str(result_of(response)["content"][0]["text"])


# -- Audience ------------------------------------------------------------------------------


@pytest.fixture
def dots_default_validator(settings: Any) -> None:
    """DOT as it comes: it checks a token that names a resource against the request's
    URL by prefix, and takes a token that names none as unrestricted (the testproject,
    following the OAuth guide, gives DOT's own views the exact match instead)."""
    dot = dict(settings.OAUTH2_PROVIDER)
    dot.pop("RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR", None)
    settings.OAUTH2_PROVIDER = dot


@pytest.mark.usefixtures("dots_default_validator")
@pytest.mark.parametrize(
    ("resource", "ours"),
    [
        (["https://other.example.com/mcp"], False),  # DOT's class refuses it too
        (["http://testserver"], True),  # a prefix of the endpoint's URL: DOT takes it
        ([], True),  # no resource: unrestricted to DOT
    ],
    ids=["another-server", "a-prefix", "none"],
)
def test_a_dot_token_not_issued_for_this_server_is_a_401_through_drf(
    client, dot_site, alice, resource, ours
):
    """basic/authorization.mdx, "Token Audience Binding and Validation": a server MUST
    accept only tokens issued for itself (RFC 8707). DOT's class took a token issued for
    a prefix of the endpoint's URL, and one with no ``resource`` as unrestricted; each is
    now the 401 ``invalid_token`` that ``DOTAuthenticator`` gives (``ours``: the audience
    check refused it, not DOT's class)."""
    response = call_tool(client, "whoami", {}, headers=bearer(make_token(alice, resource=resource)))
    assert_error(response, 401, errors.INVALID_REQUEST)
    challenge = response["WWW-Authenticate"]
    assert 'error="invalid_token"' in challenge
    assert ("(audience)" in challenge) is ours


def test_a_dot_token_for_this_server_is_its_users_and_scope_limited(client, dot_site, alice):
    """basic/authorization.mdx, "Token Audience Binding and Validation": the token issued
    for this server is accepted, as its user, limited by its scopes, under the credential
    revocation re-checks read (``dot:<pk>``)."""
    token = make_token(alice, scope="mcp books:write")
    who = text_of(call_tool(client, "whoami", {}, headers=bearer(token)))
    assert who == f"drf user:{alice.pk} books:write mcp"
    assert text_of(call_tool(client, "credential", {}, headers=bearer(token))) == f"dot:{token.pk}"
    assert text_of(call_tool(client, "write", {}, headers=bearer(token))) == "written"


@pytest.mark.parametrize("authenticator", [DRF, DOT], ids=["drf", "dot"])
def test_a_dot_token_without_the_scope_gets_the_same_403_either_way(
    client, dot_site, alice, settings, authenticator
):
    """basic/authorization.mdx, "Runtime Insufficient Scope Errors": a valid token lacking
    the tool's scope is a 403 ``insufficient_scope``. Through DRF it passed every scope
    check (a DRF class grants no scopes)."""
    use(settings, authenticator)
    response = call_tool(client, "write", {}, headers=bearer(make_token(alice, scope="mcp")))
    assert_error(response, 403, errors.INVALID_REQUEST)
    assert 'error="insufficient_scope"' in response["WWW-Authenticate"]
    assert 'scope="books:write"' in response["WWW-Authenticate"]


def test_a_client_credentials_token_acts_for_its_client_within_its_scopes(client, dot_site):
    """A DOT token with no user (``client_credentials``): the client acts for itself, as
    through ``DOTAuthenticator``, and may do what its scopes allow (a 403 beyond them,
    not a 401 sending it to sign in again)."""
    token = make_token(None, scope="mcp")
    who = text_of(call_tool(client, "whoami", {}, headers=bearer(token)))
    assert who == f"drf client:{token.application.client_id} mcp"
    assert_error(call_tool(client, "write", {}, headers=bearer(token)), 403, errors.INVALID_REQUEST)


def test_a_dot_token_of_an_inactive_user_is_a_401_through_drf(client, dot_site, alice):
    """Every authenticator refuses an inactive user; DOT's DRF class does not ask."""
    token = make_token(alice)
    alice.is_active = False
    alice.save()
    assert_error(
        call_tool(client, "whoami", {}, headers=bearer(token)), 401, errors.INVALID_REQUEST
    )


def test_without_a_resource_a_dot_token_is_never_served(client, dot_site, alice, settings):
    """With no audience to check (neither ``OAUTH["RESOURCE"]`` nor ``RESOURCE``), a DOT
    token through DRF is not taken as unrestricted: the request fails as it does with
    ``DOTAuthenticator`` (``ImproperlyConfigured``), which check E012 reports at
    start-up."""
    use(settings, OAUTH={})
    with pytest.raises(ImproperlyConfigured, match="RESOURCE"):
        call_tool(client, "whoami", {}, headers=bearer(make_token(alice)))


# -- What DOT's class needs from the bridge ------------------------------------------------


def test_django_oauth_toolkits_own_drf_class_works_through_the_drf_authenticator(
    client, dot_site, alice
):
    """django-oauth-toolkit's DRF class reads the body (``request.POST``), which the
    middleware had consumed: every bearer request was an HTML 500 (RawPostDataException),
    and with the body kept, DRF's request with no parser refused JSON as an unsupported
    media type."""
    who = text_of(call_tool(client, "whoami", {}, headers=bearer(make_token(alice))))
    assert who.startswith(f"drf user:{alice.pk} ")


class NoUserAuthentication:
    """A DRF class of the project's that vouches for no user (``Bearer nobody``)."""

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        if request.META.get("HTTP_AUTHORIZATION") != "Bearer nobody":
            return None
        return None, "nobody"

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"


def test_a_drf_class_vouching_for_no_user_passes_no_scope_check(client, dot_site, settings):
    """A DRF class grants no scopes (None: not limited), so a caller it authenticates with
    no user must not count as signed in: it would pass every ``scopes_required``."""
    use(settings, DRF_AUTHENTICATION_CLASSES=[NoUserAuthentication])
    response = call_tool(client, "write", {}, headers={"Authorization": "Bearer nobody"})
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("body", "content_type"),
    [("[" * 100_000 + "]" * 100_000, "application/json"), ("{bad", "application/json")],
    ids=["deep", "malformed"],
)
def test_the_drf_bridge_does_not_parse_the_body(client, dot_site, alice, body, content_type):
    """Authentication must not depend on the JSON-RPC body: DRF parsing it turned a deep
    body into an HTML 500 (RecursionError) and a malformed one into a 401 telling the
    client to throw away a good token. The message gets its own answer: 400, -32700."""
    headers = {
        **bearer(make_token(alice)),
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }
    response = post_raw(client, body, headers, content_type=content_type)
    assert response.status_code == 400
    assert error_of(response)["code"] == -32700


# -- Checks E012 and W014 --------------------------------------------------------------------


def messages(settings: Any, check_id: str, classes: list[str], **values: Any) -> list[str]:
    use(settings, DRF_AUTHENTICATION_CLASSES=classes, **values)
    return [m.msg for m in checks.run_checks() if m.id == check_id]


def test_e012_when_drf_runs_dots_class_without_a_resource(settings):
    """Without ``RESOURCE`` no DOT token's audience can be checked: every one that came
    through DRF would fail. Reported at start-up, as for ``DOTAuthenticator``."""
    (message,) = messages(settings, "django_mcp.E012", [DOTS_DRF_CLASS], OAUTH={})
    assert DRF in message
    assert "OAUTH['RESOURCE']" in message
    assert (
        messages(settings, "django_mcp.E012", [DOTS_DRF_CLASS], OAUTH={}, RESOURCE=RESOURCE) == []
    )


def test_no_e012_when_drf_runs_no_dot_class(settings):
    basic = ["rest_framework.authentication.BasicAuthentication"]
    assert messages(settings, "django_mcp.E012", basic, OAUTH={}) == []


def test_w014_when_drf_runs_dots_class_with_no_authorization_server(settings):
    """basic/authorization.mdx: the protected resource metadata MUST name at least one
    authorization server; DOT's tokens come from one, which clients must find."""
    (message,) = messages(settings, "django_mcp.W014", [DOTS_DRF_CLASS], AUTHORIZATION_SERVERS=[])
    assert DRF in message
