"""Which MCP view a request path is routed to, resolved once per path where that is safe.

The native paths (:mod:`~django_mcp.http.native` for ASGI,
:mod:`~django_mcp.http.native_wsgi` for WSGI) and the ASGI body limit
(:mod:`~django_mcp.http.asgi`) must know whether a request goes to an ``MCPView`` before
Django's handler sees it. They ask :func:`mcp_match_at` with the path as Django will route
it (without the script prefix), which resolves it with Django's own resolver the first time
and remembers the answer, so a request costs a dict lookup.

What is remembered must be what Django would answer next time, so the memory keeps:

- the answer per path *and active language*: translated routes (``i18n_patterns``, a
  ``gettext_lazy`` route) resolve a path per language, and the language a thread has
  changes between requests (under WSGI each request through ``LocaleMiddleware`` leaves
  its own). The native paths run no ``LocaleMiddleware``, so a translated MCP route is not
  supported there (docs/deployment.md); the key only ensures that an answer made in one
  language is never served in another;
- only answers made without captured values (:func:`captures_values`, an ``include()``'s
  prefix included): a path converter's ``to_python`` may answer differently next time (a
  tenant closed, a row gone), and with captured values any client could fill the memory
  with paths of its own; such a path is resolved on every request;
- each answer with the resolver that made it, so that one resolved before a URLconf
  change, stored after it by a slower thread, is never served;
- the match itself, never handed out: each request gets a copy with its own lists and
  dicts (:func:`own_copy`), as under Django's handler each request has its own
  ``resolver_match`` to change.

:mod:`~django_mcp.http.stack` applies the same rules to the routes ``MCPMiddleware`` learns.
"""

from __future__ import annotations

from django.urls import ResolverMatch, get_resolver
from django.utils.translation import get_language

#: Paths already resolved: (path, language) -> (the resolver that resolved it, the match
#: of the MCP view it routes to, or None for another view's). Each entry keeps its
#: resolver, so an answer made before a URLconf change is never taken after it, whatever
#: the order in which two threads resolve, store and look up.
_routes: dict[tuple[str, str | None], tuple[object, ResolverMatch | None]] = {}
#: At most this many (path, language) answers are remembered (then it starts again).
ROUTES_CACHED = 1024


def captures_values(match: ResolverMatch) -> bool:
    """Whether ``match`` was made with values captured from the path, which a path
    converter's ``to_python`` produced and may refuse next time: positional ones (a
    regular expression's unnamed groups), or a route that names one anywhere, an
    ``include()``'s prefix too (``match.route`` is the whole route: Django passes a
    prefix's values in ``kwargs`` only, and a value the URLconf's extra keywords replace
    was still converted)."""
    return bool(match.args) or "<" in (match.route or "")


def own_copy(match: ResolverMatch) -> ResolverMatch:
    """A copy of ``match`` for one request, with its own lists and dicts: a middleware may
    change the ``view_kwargs`` it is given, or code may change ``request.resolver_match``,
    as Django lets them (each request has its own match there)."""
    own = object.__new__(ResolverMatch)
    own.__dict__.update(match.__dict__)
    own.kwargs = dict(match.kwargs)
    for name in ("captured_kwargs", "extra_kwargs"):  # unknown to django-stubs; may be None
        value = getattr(match, name, None)
        if value is not None:
            setattr(own, name, dict(value))
    own.app_names = list(match.app_names)
    own.namespaces = list(match.namespaces)
    if match.tried is not None:  # its entries are Django's own, one per pattern tried
        own.tried = list(match.tried)
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
    key = (path, get_language())
    known = _routes.get(key)
    if known is not None:
        if known[0] is resolver:
            return known[1], True
        _routes.clear()  # the URLconf changed: every answer is stale
    try:
        match = resolver.resolve(path)
    except Exception:  # Resolver404, or a converter's own error: Django's handler answers
        return None, False
    found = match if getattr(match.func, "mcp_server", None) is not None else None
    if captures_values(match):
        return found, False  # resolved again next time: see the module's docstring
    if len(_routes) >= ROUTES_CACHED:
        _routes.clear()
    _routes[key] = (resolver, found)
    return found, True
