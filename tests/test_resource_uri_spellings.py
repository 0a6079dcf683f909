"""One resource, one URI: spellings of a URI through ``resources/read`` over HTTP.

server/resources.mdx: each resource is uniquely identified by a URI (RFC 3986), servers
MUST validate all resource URIs and SHOULD implement access controls for sensitive ones,
and a resource that is not found is -32602 with the URI in ``data``. RFC 3986, section
6.2.2.2: a percent-encoded unreserved character is equivalent to the character itself, so
``notes://%61dmin`` is ``notes://admin``. This module is its own URLconf: a site with a
permission-gated fixed resource beside a public template that also matches its URI.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from django.urls import path

from django_mcp import Context
from django_mcp.exceptions import InvalidDeclaration
from django_mcp.protocol import errors
from django_mcp.sites import MCPSite
from tests.helpers import assert_error, read_resource, result_of

if TYPE_CHECKING:
    from django.test import Client

site = MCPSite(name="test-resource-uri-spellings")


def staff_only(ctx: Context) -> bool:
    return bool(ctx.user is not None and ctx.user.is_staff)


@site.resource("notes://admin", permission=staff_only)
def admin_note() -> str:
    """The gated note."""
    return "the admin note"


@site.resource("notes://{slug}")
def note(slug: str) -> str:
    """Every other note, public; this function would serve the admin note's name too."""
    return f"public note {slug}"


urlpatterns = [path("mcp", site.urls)]

pytestmark = [pytest.mark.urls(__name__), pytest.mark.usefixtures("no_request_log")]

#: Spellings of ``notes://admin`` (RFC 3986, 6.2.2.1 and 6.2.2.2): unreserved characters
#: percent-encoded, in either case of hex digit.
ADMIN_SPELLINGS = ["notes://admin", "notes://%61dmin", "notes://%61%64%6D%69%6E", "notes://adm%69n"]


def text_of(response: Any) -> str:
    text: str = result_of(response)["contents"][0]["text"]
    return text


@pytest.mark.django_db
@pytest.mark.parametrize("uri", ADMIN_SPELLINGS)
def test_no_spelling_of_a_gated_resource_reaches_a_template(client: Client, uri: str) -> None:
    """server/resources.mdx, "Security Considerations": access controls for sensitive
    resources. ``notes://%61dmin`` missed the fixed, staff-only ``notes://admin`` (looked up
    as written) and reached the public template with ``slug="admin"``. Every spelling is
    now the gated resource: not found for a caller who may not read it."""
    error = assert_error(read_resource(client, uri), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}


@pytest.mark.django_db
@pytest.mark.parametrize("uri", ADMIN_SPELLINGS)
def test_every_spelling_reads_the_gated_resource_for_its_reader(
    client: Client, django_user_model: Any, uri: str
) -> None:
    """RFC 3986, 6.2.2.2: the spellings are one URI, so one resource: the fixed one, for a
    caller who may read it."""
    client.force_login(django_user_model.objects.create_user("staff", is_staff=True))

    assert text_of(read_resource(client, uri)) == "the admin note"


#: Values that are not UTF-8 once decoded (``unquote`` made each U+FFFD, so every one named
#: the same resource), an overlong ``/``, an encoded surrogate, and a ``%`` that starts no
#: triplet (``100%`` decoded as ``100%25`` does).
NOT_A_VALUE = [
    "notes://%ff",
    "notes://%FE",
    "notes://a%C0%AFb",
    "notes://%ED%A0%80",
    "notes://100%",
]


@pytest.mark.django_db
@pytest.mark.parametrize("uri", NOT_A_VALUE)
def test_a_value_that_is_not_text_is_not_found(client: Client, uri: str) -> None:
    """server/resources.mdx: servers MUST validate all resource URIs; not found is -32602
    with the URI in ``data`` (docs/errors.md, ``ResourceNotFound``), never a 500. A
    template variable that does not decode to UTF-8 text names no resource."""
    error = assert_error(read_resource(client, uri), 200, errors.INVALID_PARAMS)

    assert error["data"] == {"uri": uri}


@pytest.mark.django_db
def test_a_reserved_character_percent_encoded_is_still_a_value(client: Client) -> None:
    """RFC 3986, 2.2 and 6.2.2.2: only unreserved characters are decoded when comparing
    URIs; ``%2F`` is not ``/``, so it stays a value of a simple expression (decoded for
    the function), as before."""
    assert text_of(read_resource(client, "notes://a%2Fb")) == "public note a/b"
    assert text_of(read_resource(client, "notes://caf%C3%A9")) == "public note café"


def test_a_uri_declared_in_another_spelling_is_refused() -> None:
    """Requested URIs are matched in RFC 3986's normal form, so a resource declared in
    another spelling could never be read: the declaration says which to use."""
    other = MCPSite(name="test-resource-uri-spellings-declared")

    def a_file(name: str) -> str:
        return name

    with pytest.raises(InvalidDeclaration, match="'notes://admin'"):
        other.resource("notes://%61dmin")(admin_note)
    with pytest.raises(InvalidDeclaration, match=re.escape("'files://%2F/{name}'")):
        other.resource("files://%2f/{name}")(a_file)
