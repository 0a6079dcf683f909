"""Which MCP view a request path is routed to, resolved once per path.

The native paths (:mod:`~django_mcp.http.native` for ASGI,
:mod:`~django_mcp.http.native_wsgi` for WSGI) and the ASGI body limit
(:mod:`~django_mcp.http.asgi`) must know whether a request goes to an ``MCPView`` before
Django's handler sees it. They ask :func:`mcp_match_at` with the path as Django will route
it (without the script prefix), which resolves it with Django's own resolver the first time
and remembers the answer, so a request costs a dict lookup.
"""

from __future__ import annotations

from django.urls import ResolverMatch, get_resolver

#: Paths already resolved, per URL resolver: the match of the MCP view a path routes to,
#: or None.
_routes: dict[str, ResolverMatch | None] = {}
_routes_of: list[object] = [None]  # the resolver ``_routes`` belongs to
#: At most this many paths are remembered (any client can send any path).
ROUTES_CACHED = 1024


def mcp_match_at(path: str) -> ResolverMatch | None:
    """How ``path`` resolves (as Django will resolve it) when it routes to an MCP view, or
    None. The memory forgets everything when the URLconf changes (``ROOT_URLCONF``
    overridden) and when it holds :data:`ROUTES_CACHED` paths.

    Any failure to resolve (no route, or a path converter that raises) is "not an MCP
    view", left to Django's handler to answer as it answers it, and not remembered."""
    resolver = get_resolver()
    if _routes_of[0] is not resolver:
        _routes.clear()
        _routes_of[0] = resolver
    try:
        return _routes[path]
    except KeyError:
        pass
    try:
        match = resolver.resolve(path)
    except Exception:  # Resolver404, or a converter's own error: Django's handler answers
        return None
    found = match if getattr(match.func, "mcp_server", None) is not None else None
    if len(_routes) >= ROUTES_CACHED:
        _routes.clear()
    _routes[path] = found
    return found
