"""The resource server's HTTP answers: 401 and 403 challenges and the protected resource
metadata (basic/authorization.mdx, "Scope Selection Strategy", "Error Handling" and
"Authorization Server Discovery"; RFC 6750 section 3; RFC 9728)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from django_mcp.protocol import errors
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.sites import MCPSite
from tests.auth.conftest import bearer
from tests.helpers import assert_error, call_tool, mcp_post, override_mcp, result_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.test import Client

pytestmark = pytest.mark.django_db

METADATA = "http://testserver/.well-known/oauth-protected-resource/mcp"


def test_a_scoped_tool_without_credentials_is_a_401_naming_its_scopes(
    client: Client, auth_site: MCPSite
) -> None:
    """401 with resource_metadata and the scopes needed now (basic/authorization.mdx,
    "Scope Selection Strategy")."""
    response = call_tool(client, "write", {})
    error = assert_error(response, 401, errors.INVALID_REQUEST)
    assert response.json()["id"] == 1
    assert error["message"] == "Authentication required"
    value = response["WWW-Authenticate"]
    assert value.startswith(f'Bearer resource_metadata="{METADATA}"')
    assert 'scope="books:read books:write"' in value
    assert "error=" not in value  # no token was presented (RFC 6750 section 3.1)
    assert_logged_as(error, 401)


def test_a_token_lacking_a_scope_is_a_403_naming_every_needed_scope(
    client: Client, auth_site: MCPSite, issue: Callable[..., str]
) -> None:
    """403 insufficient_scope with all the scopes of the operation in one challenge
    (basic/authorization.mdx, "Runtime Insufficient Scope Errors")."""
    response = call_tool(client, "write", {}, headers=bearer(issue("books:read")))
    error = assert_error(response, 403, errors.INVALID_REQUEST)
    value = response["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in value
    assert 'scope="books:read books:write"' in value
    assert f'resource_metadata="{METADATA}"' in value
    assert "error_description=" in value
    assert_logged_as(error, 403)


def assert_logged_as(error: dict[str, Any], status: int) -> None:
    """The refused call's row carries the error its body sent (docs/guides/records.md: a
    refusal keeps its error), although the refusal came after admission, with no reply."""
    assert recorder.flush() == 1
    row = RequestLog.objects.get()
    assert (row.method, row.target, row.http_status) == ("tools/call", "write", status)
    assert (row.error_code, row.error_message) == (error["code"], error["message"])
    assert row.outcome == "protocol_error"


def test_a_token_with_the_scopes_calls_the_tool(
    client: Client, auth_site: MCPSite, issue: Callable[..., str]
) -> None:
    response = call_tool(client, "write", {}, headers=bearer(issue("books:write books:read")))
    assert result_of(response)["content"][0]["text"] == "written"


def test_a_session_is_not_limited_by_scopes(client: Client, auth_site: MCPSite, user: Any) -> None:
    """A session carries no scopes (Caller.scopes is None): permissions alone decide."""
    client.force_login(user)
    assert result_of(call_tool(client, "write", {}))["content"][0]["text"] == "written"


def test_prompts_and_completion_ask_for_the_prompt_scopes(
    client: Client, auth_site: MCPSite, issue: Callable[..., str]
) -> None:
    token = bearer(issue("books:read"))
    params = {"name": "scoped_prompt", "arguments": {"topic": "x"}}
    response = mcp_post(client, "prompts/get", params, headers=token)
    assert response.status_code == 403
    assert 'scope="prompts:use"' in response["WWW-Authenticate"]
    completion = {"ref": {"type": "ref/prompt", "name": "scoped_prompt"}}
    completion["argument"] = {"name": "topic", "value": ""}
    response = mcp_post(client, "completion/complete", completion, headers=token)
    assert response.status_code == 403


def test_scope_gated_declarations_stay_listed(client: Client, auth_site: MCPSite) -> None:
    """Scopes are public (scopes_supported): a client learns what exists and steps up
    when it calls (ADR 0005); permission-gated ones stay hidden."""
    names = {tool["name"] for tool in result_of(mcp_post(client, "tools/list"))["tools"]}
    assert names == {"whoami", "write"}


def test_a_site_that_requires_authentication_challenges_anonymous_callers(
    client: Client, auth_site: MCPSite, issue: Callable[..., str]
) -> None:
    """Authorization required: 401 (basic/authorization.mdx, "Error Handling"), before
    the body is read; scope lists the scopes the site's declarations use."""
    auth_site.require_authentication = True
    response = mcp_post(client, "server/discover")
    assert_error(response, 401, errors.INVALID_REQUEST)
    value = response["WWW-Authenticate"]
    assert value.startswith(f'Bearer resource_metadata="{METADATA}"')
    assert 'scope="books:read books:write prompts:use"' in value
    result_of(mcp_post(client, "server/discover", headers=bearer(issue())))


def test_the_setting_requires_authentication_for_every_site(
    client: Client, auth_site: MCPSite
) -> None:
    with override_mcp(REQUIRE_AUTHENTICATION=True):
        assert mcp_post(client, "server/discover").status_code == 401
    auth_site.require_authentication = False  # the site's own choice wins
    with override_mcp(REQUIRE_AUTHENTICATION=True):
        result_of(mcp_post(client, "server/discover"))


def test_authentication_comes_after_the_origin_check(client: Client, auth_site: MCPSite) -> None:
    """Origin (403) before authentication (401) (basic/transports/streamable-http.mdx)."""
    auth_site.require_authentication = True
    response = mcp_post(client, "server/discover", headers={"Origin": "https://evil.example"})
    assert response.status_code == 403


# -- protected resource metadata (RFC 9728) ----------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"],
)
def test_the_metadata_is_served_at_both_well_known_uris(
    client: Client, auth_site: MCPSite, url: str
) -> None:
    """Path-inserted and root well-known URIs (basic/authorization.mdx, "Authorization
    Server Discovery"; RFC 9728 section 3)."""
    with override_mcp(AUTHORIZATION_SERVERS=["https://auth.example.com"]):
        response = client.get(url)
    assert response.status_code == 200
    assert response.json() == {
        "resource": "http://testserver/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["books:read", "books:write", "prompts:use"],
    }


@pytest.mark.parametrize(
    "url",
    ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"],
)
def test_a_browser_preflight_for_the_metadata_is_allowed(
    client: Client, auth_site: MCPSite, url: str
) -> None:
    """A browser-based client that reads the metadata with a header of its own asks with
    a CORS preflight first; a 405 failed its discovery (a hostile probe's finding). The
    document is public (RFC 9728 section 3): any origin, any header, no credentials."""
    response = client.options(
        url,
        HTTP_ORIGIN="https://inspector.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="mcp-protocol-version",
    )
    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "GET" in response["Access-Control-Allow-Methods"]
    assert response["Access-Control-Allow-Headers"] == "*"
    assert client.post(url).status_code == 405


def test_the_metadata_follows_the_settings(client: Client, auth_site: MCPSite) -> None:
    settings = {
        "RESOURCE": "https://api.example.com/mcp",
        "RESOURCE_NAME": "Bookshop",
        "SCOPES_SUPPORTED": ["books:read", "offline_access"],
    }
    with override_mcp(**settings):
        data = client.get("/.well-known/oauth-protected-resource/mcp").json()
        challenge = call_tool(client, "write", {})["WWW-Authenticate"]
    assert data["resource"] == "https://api.example.com/mcp"
    assert data["resource_name"] == "Bookshop"
    assert data["scopes_supported"] == ["books:read"]  # never offline_access
    expected = "https://api.example.com/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{expected}"' in challenge


def test_under_a_script_prefix_the_metadata_names_the_endpoint_clients_reach(
    client: Client, auth_site: MCPSite, settings: Any
) -> None:
    """Served under a path prefix (``SCRIPT_NAME``, here ``FORCE_SCRIPT_NAME``), the
    endpoint clients reach is ``/app/mcp``: the challenge points at the metadata inserted
    before that path, and the document's ``resource`` must be that URL, which clients
    compare with the one they connected to (basic/authorization.mdx, "Authorization Server
    Discovery"; RFC 9728 sections 3.1 and 3.3). It said ``/mcp``, dropping the prefix."""
    settings.FORCE_SCRIPT_NAME = "/app"
    challenge = call_tool(client, "write", {})["WWW-Authenticate"]
    expected = "http://testserver/.well-known/oauth-protected-resource/app/mcp"
    assert challenge.startswith(f'Bearer resource_metadata="{expected}"')
    for url in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ]:
        assert client.get(url).json()["resource"] == "http://testserver/app/mcp"
