"""A GET on the endpoint from a browser: a small page saying what the URL is.

Someone who pastes the endpoint's URL into a browser should learn what it is, not stare at
a bare 405. Only a GET whose ``Accept`` prefers ``text/html`` gets the page; everything
else (MCP clients) still gets 405, since this revision serves no GET stream
(basic/transports/streamable-http.mdx). The page is not an MCP exchange, so it is not
recorded in the request log. Staff see a link to the explorer in the admin.

Since the answer to a GET (page or 405) depends on ``Accept`` alone, both carry
``Vary: Accept`` (RFC 9110 12.5.5): else a cache (Django's cache middleware, a CDN) keyed
on the URL would serve the page to MCP clients, or the 405 to browsers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeVar

from django.core.exceptions import SynchronousOnlyOperation
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils.cache import patch_vary_headers

from django_mcp.protocol.revisions import CURRENT_REVISION

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse, HttpResponseBase

    from django_mcp.sites import MCPSite


HttpResponseT = TypeVar("HttpResponseT", bound="HttpResponseBase")

#: What a GET's ``Accept`` is weighed among: the page, or what an MCP client asks for.
OFFERED: Final = ("text/html", "application/json", "text/event-stream")


def wants_html(request: HttpRequest) -> bool:
    """Whether a GET comes from a browser: ``text/html`` named in ``Accept`` (in any case,
    with a quality above 0) and preferred over JSON and over an event stream. A client of
    an earlier revision opening its GET stream, whatever else it accepts, gets the 405
    that tells it there is none, and ``*/*`` (curl) names no HTML."""
    if request.method != "GET":
        return False
    named = [t for t in request.accepted_types if (t.main_type, t.sub_type) == ("text", "html")]
    if not named or named[0].quality <= 0:  # not named, or refused (q=0)
        return False
    return request.get_preferred_type(OFFERED) == "text/html"


def endpoint_page(request: HttpRequest, site: MCPSite) -> HttpResponse | None:
    """The page for a browser's GET, or None to answer as the protocol says (405)."""
    if not wants_html(request):
        return None
    explorer = None
    if _is_staff(request):
        try:
            explorer = reverse("admin:django_mcp_explorer", args=[site.name])
        except NoReverseMatch:
            explorer = None
    context = {
        "site": site,
        "endpoint": request.build_absolute_uri(request.path),
        "revision": CURRENT_REVISION,
        "explorer": explorer,
    }
    response = TemplateResponse(request, "django_mcp/endpoint.html", context)
    response["Allow"] = "POST"
    response.render()
    return varies_on_accept(request, response)


def varies_on_accept(request: HttpRequest, response: HttpResponseT) -> HttpResponseT:
    """``response`` to a GET (the page or the 405) marked as chosen by ``Accept``, keeping
    any other ``Vary`` (``Cookie``, added when the session is read). Any other method's
    answer does not depend on ``Accept``."""
    if request.method == "GET":
        patch_vary_headers(response, ("Accept",))
    return response


def _is_staff(request: HttpRequest) -> bool:
    """Whether the session's user is active staff. Under ASGI this runs on the event loop,
    where resolving the user (a query) is refused: the page then omits the link."""
    user = getattr(request, "user", None)
    try:
        return bool(user is not None and user.is_active and user.is_staff)
    except SynchronousOnlyOperation:
        return False
