"""A site whose lookups serve tools that are not in its registry (built per caller).

The tools guide lets ``get_tools``/``get_tool`` decide what a caller sees, which includes
tools built for one caller or tenant and never registered. Admission, the scope check and
the advertised capabilities read the registry directly, so such a tool was "Unknown tool"
(or ``tools/call`` "Method not found" on a site registering none), and a token without the
tool's ``scopes_required`` could call it: its scopes were never asked
(basic/authorization.mdx, "Scope Challenge Handling"; ADR 0005).
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import path

from django_mcp import Context, MCPHeader
from django_mcp.auth.models import AccessToken
from django_mcp.declarations.resources import resource_from_options
from django_mcp.declarations.tools import ToolSpec
from django_mcp.sites import MCPSite
from tests.helpers import call_tool, mcp_post, result_of


def tenant_report() -> str:
    return "the tenant's report"


#: Built for callers, never registered: needs a scope a token must grant.
REPORT = ToolSpec.from_options(
    tenant_report, {"name": "tenant_report", "scopes_required": "reports:read"}
)


class TenantSite(MCPSite):
    """Serves :data:`REPORT` to signed-in callers, besides what is registered."""

    def get_tools(self, context: Context | None = None) -> list[Any]:
        extra = [REPORT] if self._signed_in(context) else []
        return [*super().get_tools(context), *extra]

    def get_tool(self, name: str, context: Context | None = None) -> Any:
        if name == REPORT.name:
            return REPORT if self._signed_in(context) else None
        return super().get_tool(name, context)

    @staticmethod
    def _signed_in(context: Context | None) -> bool:
        return context is not None and bool(getattr(context.user, "is_authenticated", False))


site = TenantSite(name="test-site-lookups-served")


@site.tool
def hello() -> str:
    return "hello"


#: Registers nothing: every tool it serves comes from its lookups.
empty = TenantSite(name="test-site-lookups-empty")


def regional(region: Annotated[str, MCPHeader("Region")]) -> str:
    return region


REGIONAL = ToolSpec.from_options(regional, {})


class SharedSite(MCPSite):
    """Serves one unregistered tool to every caller, and says it decides nothing per
    caller: its lookup, asked without a caller, is still what says the tool exists."""

    decides_per_caller = False

    def get_tool(self, name: str, context: Context | None = None) -> Any:
        return REGIONAL if name == REGIONAL.name else super().get_tool(name, context)


shared = SharedSite(name="test-site-lookups-shared")

urlpatterns = [
    path("mcp", site.urls),
    path("empty/mcp", empty.urls),
    path("shared/mcp", shared.urls),
]
pytestmark = [pytest.mark.urls(__name__), pytest.mark.django_db]


@pytest.fixture
def user() -> Any:
    return get_user_model().objects.create_user("tenant", password="pw")


def bearer(user: Any, scopes: str) -> dict[str, str]:
    _, plaintext = AccessToken.objects.issue(user, scopes=scopes)
    return {"Authorization": f"Bearer {plaintext}"}


def test_a_tool_its_lookup_serves_is_called(client: Client, user: Any) -> None:
    client.force_login(user)
    served = result_of(call_tool(client, "tenant_report", {}))
    assert served["content"] == [{"type": "text", "text": "the tenant's report"}]


def test_a_tool_its_lookup_hides_is_unknown(client: Client) -> None:
    hidden = call_tool(client, "tenant_report", {})
    assert hidden.json()["error"]["code"] == -32602


def test_a_site_registering_no_tool_offers_the_tools_its_lookups_serve(
    client: Client, user: Any
) -> None:
    client.force_login(user)
    listed = result_of(mcp_post(client, "tools/list", path="/empty/mcp"))
    called = result_of(call_tool(client, "tenant_report", {}, path="/empty/mcp"))
    assert [tool["name"] for tool in listed["tools"]] == ["tenant_report"]
    assert called["content"] == [{"type": "text", "text": "the tenant's report"}]


def test_a_token_without_the_scopes_of_a_tool_its_lookup_serves_is_refused(
    client: Client, user: Any
) -> None:
    refused = call_tool(client, "tenant_report", {}, headers=bearer(user, "other"))
    granted = call_tool(client, "tenant_report", {}, headers=bearer(user, "reports:read"))
    assert refused.status_code == 403
    assert 'scope="reports:read"' in refused["WWW-Authenticate"]
    assert result_of(granted)["content"] == [{"type": "text", "text": "the tenant's report"}]


def test_the_header_parameters_of_a_tool_its_lookup_serves_are_checked(client: Client) -> None:
    """basic/transports/streamable-http.mdx, "Custom Headers from Tool Parameters": an
    ``Mcp-Param-*`` header is checked against the tool the site's lookup serves (it was
    "Unknown tool" on a site that decides nothing per caller: admission read the
    registry)."""
    served = call_tool(
        client, "regional", {"region": "eu"}, headers={"Mcp-Param-Region": "eu"}, path="/shared/mcp"
    )
    mismatched = call_tool(
        client, "regional", {"region": "eu"}, headers={"Mcp-Param-Region": "us"}, path="/shared/mcp"
    )
    assert result_of(served)["content"] == [{"type": "text", "text": "eu"}]
    assert mismatched.status_code == 400
    assert "Region" in mismatched.json()["error"]["message"]


def tenant_file(name: str) -> str:
    return f"tenant file {name}"


#: A template built per tenant, never registered.
TENANT_FILES = resource_from_options("tenant://{name}", tenant_file, {})


class TemplateSite(MCPSite):
    """Serves :data:`TENANT_FILES` to signed-in callers through its own template list."""

    def get_resource_templates(self, context: Context | None = None) -> list[Any]:
        extra = [TENANT_FILES] if TenantSite._signed_in(context) else []
        return [*super().get_resource_templates(context), *extra]


templated = TemplateSite(name="test-site-lookups-templates")


@templated.resource("public://{name}")
def public_file(name: str) -> str:
    return f"public file {name}"


urlpatterns.append(path("templates/mcp", templated.urls))


def test_a_template_its_own_list_serves_is_read(client: Client, user: Any) -> None:
    """server/resources.mdx, "Reading Resources": a template the site's own
    ``get_resource_templates`` offers a caller is what ``resources/read`` reads through;
    one it does not offer is not found, while registered templates still serve."""
    read = {"uri": "tenant://plans"}
    hidden = mcp_post(client, "resources/read", read, path="/templates/mcp")
    client.force_login(user)
    shown = mcp_post(client, "resources/read", read, path="/templates/mcp")
    public = mcp_post(client, "resources/read", {"uri": "public://a"}, path="/templates/mcp")

    assert hidden.json()["error"]["code"] == -32602
    assert result_of(shown)["contents"][0]["text"] == "tenant file plans"
    assert result_of(public)["contents"][0]["text"] == "public file a"
