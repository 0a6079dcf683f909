"""A ``requestState`` is bound to the site that issued it.

basic/patterns/mrtr.mdx, "Server Requirements": bind "an identifier for the originating
request" into the state, "rejecting state presented on a request that does not match". A
request to another site's endpoint is another request, even for a tool of the same name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path

from django_mcp import Context, MCPSite, sites
from tests import urls as test_urls
from tests.helpers import assert_error, input_required, mcp_post, request_meta, result_of

if TYPE_CHECKING:
    from collections.abc import Iterator

    from django.test import Client

pytestmark = pytest.mark.django_db

YES = {"action": "accept", "content": {"ok": True}}


@pytest.fixture
def two_sites(mcp_site: MCPSite) -> Iterator[None]:
    """``/mcp`` and ``/admin-mcp`` both declare ``confirm``, asking the same keys: on the
    first a harmless question, on the second a destructive one."""
    admin = MCPSite(name="admin-tools")

    @mcp_site.tool(name="confirm")
    def harmless(ctx: Context) -> str:
        ctx.elicit("Show the weather?", {"ok": bool}, key="first")
        ctx.elicit("And tomorrow's?", {"ok": bool}, key="second")
        return "weather shown"

    @admin.tool(name="confirm")
    def destructive(ctx: Context) -> str:
        answer = ctx.elicit("Delete every account?", {"ok": bool}, key="first")
        ctx.elicit("Really?", {"ok": bool}, key="second")
        return "deleted" if answer.accepted else "kept"

    test_urls.urlpatterns[:] = [path("mcp", mcp_site.urls), path("admin-mcp", admin.urls)]
    yield
    sites._all_sites.discard(admin)


def confirm(client: Client, where: str, **params: Any) -> Any:
    meta = request_meta(capabilities={"elicitation": {}})
    return mcp_post(client, "tools/call", {"name": "confirm", **params}, meta=meta, path=where)


def test_a_request_state_from_another_site_is_invalid_params(client: Client, two_sites: None):
    """The state that carries the harmless site's "yes" to ``first`` is refused by the
    other site, whose ``first`` asked something else: it must not answer a question the
    user never saw. On its own site the same state is still good."""
    state = input_required(confirm(client, "/mcp"))["requestState"]
    carried = input_required(
        confirm(client, "/mcp", inputResponses={"first": YES}, requestState=state)
    )["requestState"]
    retry = {"inputResponses": {"second": YES}, "requestState": carried}

    assert_error(confirm(client, "/admin-mcp", **retry), 200, -32602)
    served = result_of(confirm(client, "/mcp", **retry))
    assert served["content"][0]["text"] == "weather shown"
