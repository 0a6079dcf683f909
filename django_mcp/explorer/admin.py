"""Adds the explorer and the dashboard to an ``AdminSite``: URLs and links on the index.

``install(admin.site)`` (called from ``django_mcp/admin.py``, which the admin's
autodiscover imports) wraps that one site instance's ``get_urls`` and ``get_app_list``;
nothing is patched on the class, and a project's own ``AdminSite`` can be installed the
same way. Pages run through ``admin_view``, so they are staff-only like the rest of the
admin. There is no model behind them, hence no migration and no permission of their own:
the explorer calls the endpoint as the signed-in user, whose permissions decide what runs,
and the dashboard needs the request log's view permission.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from django.urls import NoReverseMatch, path, reverse

from django_mcp.explorer import catalogue, views

if TYPE_CHECKING:
    from django.contrib.admin import AdminSite
    from django.http import HttpRequest
    from django.urls import URLPattern, URLResolver

INSTALLED = "_django_mcp_explorer"


def urls(admin_site: AdminSite) -> list[URLResolver | URLPattern]:
    wrap = admin_site.admin_view
    explorer = wrap(partial(views.explorer, admin_site=admin_site))
    # Which admin site serves it, for the endpoint's browser page (django_mcp.http.browser,
    # which may not import this module): it asks that site whether the user may use it.
    setattr(explorer, "mcp_admin_site", admin_site)  # noqa: B010
    return [
        # ``path``, not ``str``: a site's name may hold a slash (``MCPSite(name="a/b")``
        # serves fine), and every admin page reverses this route for each site. The
        # ``explorer/`` prefix keeps it clear of the dashboard and the model pages.
        path("django_mcp/explorer/<path:site_name>/", explorer, name="django_mcp_explorer"),
        path(
            "django_mcp/dashboard/",
            wrap(partial(views.dashboard, admin_site=admin_site)),
            name="django_mcp_dashboard",
        ),
    ]


def _reversed(viewname: str, *args: str) -> str | None:
    """The route's URL, or None when it names no route: an admin site named with a ":"
    (which ``reverse()`` reads as namespaces) is refused by the system check
    django_mcp.E015, but checks run only with manage.py; a server started without it
    must still serve the admin's pages, without the links, rather than a 500 on each."""
    try:
        return reverse(viewname, args=args)
    except NoReverseMatch:
        return None


def _entry(name: str, object_name: str, url: str) -> dict[str, Any]:
    return {
        "name": name,
        "object_name": object_name,
        "admin_url": url,
        "add_url": None,
        "view_only": True,
        "perms": {"view": True},
    }


def links(admin_site: AdminSite, request: HttpRequest) -> list[dict[str, Any]]:
    """Entries shaped like the admin's model entries, so the index lists them; a link
    that does not reverse is left out (see ``_reversed``)."""
    name = admin_site.name
    found: list[dict[str, Any]] = []
    for item in catalogue.sites():
        url = _reversed(f"{name}:django_mcp_explorer", item.name)
        if url is not None:
            found.append(_entry(f"MCP explorer ({item.name})", "Explorer", url))
    if request.user.has_perm("django_mcp.view_requestlog"):
        url = _reversed(f"{name}:django_mcp_dashboard")
        if url is not None:
            found.append(_entry("MCP dashboard", "Dashboard", url))
    return found


def install(admin_site: AdminSite) -> None:
    """Serve the pages under ``admin_site`` and list them in its index (once)."""
    if getattr(admin_site, INSTALLED, False):
        return
    original_urls = admin_site.get_urls
    original_list = admin_site.get_app_list

    def get_urls() -> list[URLResolver | URLPattern]:
        return urls(admin_site) + original_urls()

    def get_app_list(request: HttpRequest, app_label: str | None = None) -> list[Any]:
        app_list: list[Any] = original_list(request, app_label)
        if app_label not in (None, "django_mcp"):
            return app_list
        mine = next((app for app in app_list if app["app_label"] == "django_mcp"), None)
        added = links(admin_site, request)
        if mine is None and added:
            mine = {
                "name": "MCP",
                "app_label": "django_mcp",
                "app_url": added[0]["admin_url"],
                "has_module_perms": True,
                "models": [],
            }
            app_list.append(mine)
        if mine is not None:
            mine["models"] = added + list(mine["models"])
        return app_list

    admin_site.get_urls = get_urls  # type: ignore[method-assign]
    admin_site.get_app_list = get_app_list  # type: ignore[method-assign]
    setattr(admin_site, INSTALLED, True)
