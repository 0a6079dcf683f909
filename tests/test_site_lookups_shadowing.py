"""A site with a resource lookup of its own keeps a hidden template's shadow.

A registered template hidden from the caller shadows a later public one that also matches
(``files://secret/plans`` is not read through ``files://{+path}``, server/resources.mdx:
servers SHOULD implement access controls for sensitive resources). A site overriding
``find_resource`` (to wrap it, calling ``super()``) or ``get_resource_templates`` (to add a
template built per caller) had the URI matched against the caller's own, filtered, list:
the hidden template was gone from it, so the public one read the secret. This module is
its own URLconf.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path

from django_mcp import Context
from django_mcp.protocol import errors
from django_mcp.sites import MCPSite
from tests.helpers import assert_error, read_resource, result_of

if TYPE_CHECKING:
    from django.test import Client


def staff_only(ctx: Context) -> bool:
    return bool(ctx.user is not None and ctx.user.is_staff)


class WrappingSite(MCPSite):
    """Wraps ``find_resource`` (as one logging or counting lookups would)."""

    def find_resource(self, uri: str, context: Context | None = None) -> Any:
        return super().find_resource(uri, context)


class ListingSite(MCPSite):
    """Offers the registered templates, as its own list."""

    def get_resource_templates(self, context: Context | None = None) -> list[Any]:
        return list(super().get_resource_templates(context))


class HidingSite(MCPSite):
    """Hides the secret files from all but staff in its own list, not by permission."""

    def get_resource_templates(self, context: Context | None = None) -> list[Any]:
        staff = context is not None and staff_only(context)
        templates = super().get_resource_templates(context)
        return [t for t in templates if staff or not t.uri.startswith("files://secret/")]


SITES = {
    "wrapping": WrappingSite(name="test-lookups-shadowing-wrapping"),
    "listing": ListingSite(name="test-lookups-shadowing-listing"),
    "hiding": HidingSite(name="test-lookups-shadowing-hiding"),
}

for label, site in SITES.items():
    gate = {} if label == "hiding" else {"permission": staff_only}
    site.resource("files://secret/{name}", **gate)(lambda name: "gated")
    site.resource("files://{+path}")(lambda path: f"public file {path}")

urlpatterns = [path(f"{label}/mcp", site.urls) for label, site in SITES.items()]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.usefixtures("no_request_log")]


@pytest.mark.django_db
@pytest.mark.parametrize("label", SITES)
def test_a_hidden_template_still_shadows(client: Client, label: str) -> None:
    uri = "files://secret/plans"
    error = assert_error(
        read_resource(client, uri, path=f"/{label}/mcp"), 200, errors.INVALID_PARAMS
    )

    assert error["data"] == {"uri": uri}


@pytest.mark.django_db
@pytest.mark.parametrize("label", SITES)
def test_its_reader_and_other_uris_are_served(
    client: Client, django_user_model: Any, label: str
) -> None:
    public = read_resource(client, "files://docs/a", path=f"/{label}/mcp")
    client.force_login(django_user_model.objects.create_user("staff", is_staff=True))
    gated = read_resource(client, "files://secret/plans", path=f"/{label}/mcp")

    assert result_of(public)["contents"][0]["text"] == "public file docs/a"
    assert result_of(gated)["contents"][0]["text"] == "gated"
