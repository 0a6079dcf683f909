"""Which user a valid OAuth token names, through the real HTTP stack, when the user field
does not name exactly one user (basic/authorization.mdx, "Token Handling": an invalid or
unusable token is a 401 with the Bearer challenge, never a server error)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import User

from django_mcp.protocol import errors
from tests.helpers import assert_error, call_tool
from tests.oauth.conftest import configure
from tests.oauth.test_http import bearer, site, use

if TYPE_CHECKING:
    from django.test import Client

    from django_mcp.sites import MCPSite
    from tests.oauth.conftest import SigningKey, StubAuthorizationServer

pytestmark = pytest.mark.django_db

__all__ = ["site"]  # the fixture, imported for the tests here

JWT = "django_mcp.auth.oauth.jwt.JWTAuthenticator"


@pytest.fixture
def jwt_only(
    settings: Any, authorization_server: StubAuthorizationServer, oauth_settings: Any, rsa_key: Any
) -> StubAuthorizationServer:
    authorization_server.jwks = {"keys": [rsa_key.jwk()]}
    use(settings, JWT)
    return authorization_server


@pytest.mark.parametrize("create_users", [False, True])
def test_a_claim_that_matches_two_users_is_a_401_not_a_500(
    client: Client,
    site: MCPSite,
    jwt_only: Any,
    settings: Any,
    rsa_key: SigningKey,
    create_users: bool,
) -> None:
    """``USER_FIELD = "email"`` (the guide's own example of a configurable field) is not
    unique in Django's user model: two accounts sharing an address made the lookup raise
    ``MultipleObjectsReturned``, a 500. Which of them the token speaks for cannot be
    known, so it is refused as unusable (basic/authorization.mdx, "Token Handling")."""
    User.objects.create_user("carol", email="shared@example.com")
    User.objects.create_user("dave", email="shared@example.com")
    configure(settings, USER_CLAIM="email", USER_FIELD="email", CREATE_USERS=create_users)
    token = rsa_key.mint(sub="carol", email="shared@example.com")
    response = call_tool(client, "whoami", {}, headers=bearer(token))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_a_claim_the_user_field_cannot_hold_is_a_401_not_a_500(
    client: Client, site: MCPSite, jwt_only: Any, settings: Any, rsa_key: SigningKey
) -> None:
    """``USER_FIELD = "pk"`` where an authorization server puts the user's id in ``sub``:
    a token of a client (``sub`` its own name, not its ``client_id``) made the integer
    lookup raise ``ValueError``, a 500, instead of naming no user of this server."""
    configure(settings, USER_FIELD="pk")
    token = rsa_key.mint(sub="reporting-service")
    response = call_tool(client, "whoami", {}, headers=bearer(token))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


@pytest.mark.parametrize(
    ("subject", "create_users"),
    [("alice\x00", False), ("alice\x00", True), ("u" * 151, True)],
)
def test_a_subject_no_user_row_can_hold_is_a_401_not_an_outage(
    client: Client,
    site: MCPSite,
    jwt_only: Any,
    settings: Any,
    rsa_key: SigningKey,
    subject: str,
    create_users: bool,
) -> None:
    """A ``sub`` holding NUL, or (with ``CREATE_USERS``) longer than the 150 characters
    of ``username``: PostgreSQL refused the lookup or the new row with a ``DataError``,
    which was taken for the database being down, so a valid-looking token got -32603 (and
    the log an outage) where basic/authorization.mdx ("Token Handling") asks for a 401."""
    User.objects.create_user("alice")
    configure(settings, CREATE_USERS=create_users)
    response = call_tool(client, "whoami", {}, headers=bearer(rsa_key.mint(sub=subject)))
    assert_error(response, 401, errors.INVALID_REQUEST)
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
    assert not User.objects.exclude(username="alice").exists()
