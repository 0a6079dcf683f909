"""A GET on the endpoint from a browser: a small page saying what the URL is.

Someone who pastes the endpoint's URL into a browser should learn what it is, not stare at
a bare 405. Only a GET whose ``Accept`` prefers ``text/html`` gets the page; everything
else (MCP clients) still gets 405, since this revision serves no GET stream
(basic/transports/streamable-http.mdx). The page is not an MCP exchange, so it is not
recorded in the request log. A user who may use an admin site serving the explorer sees a
link to it (:func:`explorer_link` says which site).

Since the answer to a GET (page or 405) depends on ``Accept`` alone, both carry
``Vary: Accept`` (RFC 9110 12.5.5): else a cache (Django's cache middleware, a CDN) keyed
on the URL would serve the page to MCP clients, or the 405 to browsers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeVar
from urllib.parse import quote

from django.apps import apps
from django.core.exceptions import SynchronousOnlyOperation
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, Resolver404, get_script_prefix, resolve, reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import RFC3986_SUBDELIMS

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
    context = {
        "site": site,
        "endpoint": request.build_absolute_uri(request.path),
        "revision": CURRENT_REVISION,
        "explorer": explorer_link(request, site),
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


def explorer_link(request: HttpRequest, site: MCPSite) -> str | None:
    """The path of ``site``'s explorer under an admin site the user may use, or None.

    The endpoint cannot know which admin site the visitor came from, and every admin site
    with the explorer lists every MCP site; so the rule is: among the admin sites routed in
    the URLconf with the explorer installed, the first whose ``has_permission`` admits the
    user, the one named "admin" (Django's default instance, ``admin.site``) first, then the
    others by name. Each name is reversed under its own instance namespace and resolved
    back, and the admin site asked is the one serving that route (its view carries it as
    ``mcp_admin_site``): reversing "admin:..." falls back to another instance when no site
    named "admin" is routed, and an unrouted ``AdminSite`` may share a routed one's name.
    Under ASGI this runs on the event loop, where resolving the user (a query) is refused:
    no link then.
    """
    if not apps.is_installed("django.contrib.admin"):
        return None
    from django.contrib.admin.sites import all_sites

    names = sorted({item.name for item in all_sites}, key=lambda name: (name != "admin", name))
    for name in names:
        try:
            path = reverse(f"{name}:django_mcp_explorer", args=[site.name])
            match = resolve(_below_script_prefix(path))
        except (NoReverseMatch, Resolver404):
            continue
        admin_site = getattr(match.func, "mcp_admin_site", None)
        if admin_site is None or match.namespace != name:
            continue
        try:
            if admin_site.has_permission(request):
                return path
        except SynchronousOnlyOperation:
            return None
    return None


def _below_script_prefix(path: str) -> str:
    """``path``, as reverse() gave it, without the script prefix (SCRIPT_NAME or
    FORCE_SCRIPT_NAME), which resolve() does not take. reverse() percent-encodes the prefix
    as it does the rest of the path (``quote`` with RFC 3986's sub-delimiters, ``/~:@``
    safe), so the prefix is cut off in that spelling: "/my app/" is "/my%20app/" there."""
    prefix = quote(get_script_prefix(), safe=RFC3986_SUBDELIMS + "/~:@")
    return "/" + path.removeprefix(prefix) if path.startswith(prefix) else path
