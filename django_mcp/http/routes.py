"""Which MCP view a request path is routed to, resolved once per path where that is safe.

The native paths (:mod:`~django_mcp.http.native` for ASGI,
:mod:`~django_mcp.http.native_wsgi` for WSGI) and the ASGI body limit
(:mod:`~django_mcp.http.asgi`) must know whether a request goes to an ``MCPView`` before
Django's handler sees it. They ask :func:`mcp_match_at` with the path as Django will route
it (without the script prefix), which resolves it with Django's own resolver the first time
and remembers the answer, so a request costs a dict lookup.

What is remembered must be what Django would answer next time, so the memory keeps:

- the answer per path *and active language*: translated routes (``i18n_patterns``, a
  ``gettext_lazy`` route) resolve a path per language;
- only answers made without captured values: a path converter's ``to_python`` may answer
  differently next time (a tenant closed, a row gone), and with captured values any client
  could fill the memory with paths of its own; such a path is resolved on every request;
- the match itself, never handed out: each request gets a copy (:func:`own_copy`), as under
  Django's handler each request has its own ``resolver_match`` to annotate.

:mod:`~django_mcp.http.stack` applies the same rules to the routes ``MCPMiddleware`` learns.
"""

from __future__ import annotations

from django.urls import ResolverMatch, get_resolver
from django.utils.translation import get_language

#: Paths already resolved, per URL resolver: the match of the MCP view a path routes to
#: in a language, or None (another view's).
_routes: dict[tuple[str, str | None], ResolverMatch | None] = {}
_routes_of: list[object] = [None]  # the resolver ``_routes`` belongs to
#: At most this many (path, language) answers are remembered (then it starts again).
ROUTES_CACHED = 1024


def captures_values(match: ResolverMatch) -> bool:
    """Whether ``match`` was made with values captured from the path (which a path
    converter's ``to_python`` produced, and may refuse next time)."""
    return bool(match.args) or bool(getattr(match, "captured_kwargs", None))


def own_copy(match: ResolverMatch) -> ResolverMatch:
    """A copy of ``match`` for one request: a middleware may change the ``view_kwargs`` it
    is given, or code may set attributes on ``request.resolver_match``, as Django lets
    them (each request has its own match there)."""
    own = object.__new__(ResolverMatch)
    own.__dict__.update(match.__dict__)
    own.kwargs = dict(match.kwargs)
    return own


def mcp_match_at(path: str) -> ResolverMatch | None:
    """How ``path`` resolves (as Django will resolve it, in the active language) when it
    routes to an MCP view, as a match of the caller's own, or None. The memory forgets
    everything when the URLconf changes (``ROOT_URLCONF`` overridden,
    ``clear_url_caches()``) and when it holds :data:`ROUTES_CACHED` answers.

    Any failure to resolve (no route, or a path converter that raises) is "not an MCP
    view", left to Django's handler to answer as it answers it, and not remembered."""
    found, remembered = _resolved(path)
    return own_copy(found) if remembered and found is not None else found


def routes_to_mcp(path: str) -> bool:
    """Whether ``path`` routes to an MCP view (:func:`mcp_match_at`, with no copy made)."""
    return _resolved(path)[0] is not None


def _resolved(path: str) -> tuple[ResolverMatch | None, bool]:
    """The MCP view's match at ``path`` or None, and whether it is the remembered one
    (shared: copy it before handing it to a request)."""
    resolver = get_resolver()
    if _routes_of[0] is not resolver:
        _routes.clear()
        _routes_of[0] = resolver
    key = (path, get_language())
    try:
        return _routes[key], True
    except KeyError:
        pass
    try:
        match = resolver.resolve(path)
    except Exception:  # Resolver404, or a converter's own error: Django's handler answers
        return None, False
    found = match if getattr(match.func, "mcp_server", None) is not None else None
    if captures_values(match):
        return found, False  # resolved again next time: see the module's docstring
    if len(_routes) >= ROUTES_CACHED:
        _routes.clear()
    _routes[key] = found
    return found, True
