"""A template must not serve, under another URI, the values a gated fixed resource's own
URI gives it.

server/resources.mdx: servers SHOULD implement access controls for sensitive resources.
A fixed resource is looked up in RFC 3986 normal form, but a URI that normal form does
not fold onto it can still reach a public template with exactly the values the fixed
resource's URI would give that template: ``notes://admin?`` (an empty or unknown query, a
template with a query expression) and ``notes://caf%C3%A9`` (the IRI ``notes://café``
percent-encoded, RFC 3987 3.1). Each is now the fixed resource, with its permission.
Likewise a template hidden from the caller shadows a later public one that also matches
(``files://secret/plans`` is not read through ``files://{+path}``); and ``{+path}`` keeps
``%2F`` as it is (RFC 6570 3.2.3), so ``files://secret%2Fplans`` is another value. This
module is its own URLconf.
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

site = MCPSite(name="test-resource-uri-aliases")


def staff_only(ctx: Context) -> bool:
    return bool(ctx.user is not None and ctx.user.is_staff)


@site.resource("notes://admin", permission=staff_only)
def admin_note() -> str:
    """The gated note."""
    return "gated"


@site.resource("notes://café", permission=staff_only)
def cafe_note() -> str:
    """A gated note whose URI is an IRI."""
    return "gated"


@site.resource("files://docs/secret", permission=staff_only)
def secret_file() -> str:
    """A gated file."""
    return "gated"


@site.resource("files://secret/{name}", permission=staff_only)
def a_secret_file(name: str) -> str:
    """Gated files, a template before the public one in the templates' order."""
    return "gated"


@site.resource("notes://{slug}{?v}")
def note(slug: str, v: str = "") -> str:
    """Every other note, public."""
    return f"public note {slug}"


@site.resource("files://{+path}")
def a_file(path: str) -> str:
    """Every other file, public."""
    return f"public file {path}"


urlpatterns = [path("mcp", site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.usefixtures("no_request_log")]

#: URIs a public template read as a gated fixed resource's own values.
ALIASES = [
    "notes://admin?",
    "notes://admin?x=1",
    "notes://%61dmin?",
    "notes://caf%C3%A9",
    "notes://caf%c3%a9?",
    "files://secret/plans",  # a gated template's, which the public files://{+path} matches
]


@pytest.mark.django_db
@pytest.mark.parametrize("uri", ALIASES)
def test_no_alias_of_a_gated_resource_reaches_a_template(client: Client, uri: str) -> None:
    """The template would hand its function the gated resource's values; the caller who
    may not read the fixed resource finds nothing (-32602 with the URI in ``data``)."""
    error = assert_error(read_resource(client, uri), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}


@pytest.mark.django_db
@pytest.mark.parametrize("uri", ALIASES)
def test_an_alias_reads_the_gated_resource_for_its_reader(
    client: Client, django_user_model: Any, uri: str
) -> None:
    client.force_login(django_user_model.objects.create_user("staff", is_staff=True))

    assert result_of(read_resource(client, uri))["contents"][0]["text"] == "gated"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("uri", "text"),
    [
        ("notes://admin?v=1", "public note admin"),  # another value: another resource
        ("notes://other?", "public note other"),
        ("files://docs%2Fother", "public file docs%2Fother"),
        # RFC 6570 3.2.3: a reserved expansion passes an encoded triplet through, so
        # ``%2F`` is not ``/``: another value than the gated file's, not an alias of it.
        ("files://docs%2Fsecret", "public file docs%2Fsecret"),
        ("files://docs%2fsecret", "public file docs%2Fsecret"),
        ("files://docs%252Fsecret", "public file docs%252Fsecret"),
        ("files://secret%2Fplans", "public file secret%2Fplans"),  # not secret/plans
        ("files://a%20b/caf%C3%A9", "public file a b/café"),
    ],
)
def test_other_values_still_reach_the_template(client: Client, uri: str, text: str) -> None:
    assert result_of(read_resource(client, uri))["contents"][0]["text"] == text
