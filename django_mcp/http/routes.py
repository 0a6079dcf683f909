"""Which MCP view a request path is routed to, resolved once per path where that is safe.

The native paths (:mod:`~django_mcp.http.native` for ASGI,
:mod:`~django_mcp.http.native_wsgi` for WSGI) and the ASGI body limit
(:mod:`~django_mcp.http.asgi`) must know whether a request goes to an ``MCPView`` before
Django's handler sees it. They ask :func:`mcp_match_at` with the path as Django will route
it (without the script prefix), which resolves it with Django's own resolver the first time
and remembers the answer, so a request costs a dict lookup.

What is remembered must be what Django would answer next time, so the memory keeps:

- the answer per path *and active language* when the URLconf may route a path by
  language (``i18n_patterns``, a ``gettext_lazy`` route, a converter of the project's
  own: :func:`varies_by_language`), while the language a thread has changes between
  requests (under WSGI each request through ``LocaleMiddleware`` leaves its own). The
  native paths run no ``LocaleMiddleware``, so a translated MCP route is not supported
  there (docs/deployment.md); the key only ensures that an answer made in one language is
  never served in another;
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

from collections.abc import Iterator
from typing import Final, TypeAlias

from django.urls import ResolverMatch, URLPattern, URLResolver, get_resolver
from django.urls.converters import DEFAULT_CONVERTERS
from django.urls.resolvers import RegexPattern, RoutePattern
from django.utils.translation import get_language

#: At most this many (path, language) answers are remembered (then it starts again).
ROUTES_CACHED = 1024
#: Django's own path converters (``int``, ``path``, ``slug``, ``str``, ``uuid``), whose
#: ``to_python`` reads nothing but the value; a converter of the project's own may read
#: the active language (a slug per language) and refuse a value in one language only.
DJANGO_CONVERTERS: Final = frozenset(type(converter) for converter in DEFAULT_CONVERTERS.values())
#: The resolver :func:`route_language` read last, and whether its URLconf's routes vary
#: by language (read once per URLconf: :func:`varies_by_language` walks all of it).
_language_dependence: tuple[object, bool] | None = None


def route_language(resolver: object) -> str | None:
    """What a remembered answer is keyed by besides its path: the active language when
    ``resolver``'s URLconf may route a path differently per language
    (:func:`varies_by_language`), else None, the same for every language.

    Why not always the language: reading it (asgiref's ``Local``) was the dearest step of
    a lookup, about 16,000 instructions per request (callgrind), 2.5% of a ``tools/call``
    on the native WSGI path and 1.6% of any ``POST`` through ``MCPMiddleware``, for the
    many projects without a translated route."""
    global _language_dependence
    known = _language_dependence
    if known is None or known[0] is not resolver:
        known = _language_dependence = (resolver, varies_by_language(resolver))
    return get_language() if known[1] else None


def varies_by_language(resolver: object) -> bool:
    """Whether a path may resolve differently per active language under ``resolver``:
    False only when every pattern of its URLconf, ``include()``-d ones too, is Django's
    own ``path()`` or ``re_path()`` pattern made from a plain string with none but
    Django's own converters, in lists or tuples. Anything else counts as varying: a lazy
    translation (its text is read per language), a ``LocalePrefixPattern``
    (``i18n_patterns``), a converter of the project's own (its ``to_python`` may read the
    language, and refuse a value in one language only, so an earlier route takes the path
    in another), a pattern or URL class or ``urlpatterns`` container of the project's own
    (which may read the language as it likes), and a URLconf that cannot be read. Only a
    fixed URLconf may share one answer between languages. Walked once per resolver
    (:func:`route_language`); 20,000 patterns took about 11 ms."""
    pending: list[object] = [resolver]
    walked: set[int] = set()  # a URLconf that includes itself is walked once
    try:
        while pending:
            entry = pending.pop()
            if type(entry) is URLResolver:
                if id(entry) in walked:
                    continue
                walked.add(id(entry))
                patterns: object = entry.url_patterns  # typed a list; may be any iterable
                if type(patterns) is not list and type(patterns) is not tuple:
                    return True  # Django iterates it per resolve, in each language
                pending.extend(patterns)
            elif type(entry) is not URLPattern:
                return True
            if not _fixed(entry.pattern):
                return True
    except Exception:  # a URLconf that fails to import: Django's to report, not ours
        return True
    return False


def _fixed(pattern: object) -> bool:
    """Whether ``pattern`` matches the same paths in every language: Django's own
    ``RoutePattern`` (with Django's own converters only) or ``RegexPattern`` made from a
    ``str``, which Django itself compiles once for all languages
    (``LocaleRegexDescriptor``)."""
    if type(pattern) is RoutePattern:
        return isinstance(getattr(pattern, "_route", None), str) and all(  # private to Django
            type(converter) in DJANGO_CONVERTERS for converter in pattern.converters.values()
        )
    if type(pattern) is RegexPattern:
        return isinstance(getattr(pattern, "_regex", None), str)
    return False


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


Entry: TypeAlias = tuple[object, ResolverMatch | None]


class RouteTable:
    """Answers of Django's resolver kept per path, and per active language where the
    URLconf's routes vary by it (:func:`route_language`), each with the resolver that made
    it (an ``Entry``: the resolver, the match), at most ``limit`` of them (then it starts
    again). Both memories keep theirs in one: this module's, for the native paths, and
    the routes ``MCPMiddleware`` learns (:class:`~django_mcp.http.stack.LearntRoutes`).

    An answer is taken only with the resolver that made it, so one made before a URLconf
    change (``ROOT_URLCONF`` overridden, ``clear_url_caches()``: Django's
    ``get_resolver()`` returns another resolver) is never taken after it, whatever the
    order in which two threads resolve, keep and look up; the first answer kept with
    another resolver than the last one empties the table, as every answer in it is stale
    (some under keys no request asks for any more: another language, or none)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._answers: dict[tuple[str, str | None], Entry] = {}
        self._resolver: object = None  # that of the answers kept last

    def __len__(self) -> int:
        return len(self._answers)

    def __iter__(self) -> Iterator[tuple[str, str | None]]:
        """The keys kept: (path, language or None)."""
        return iter(list(self._answers))

    def entry(self, path: str, resolver: object) -> Entry | None:
        """What is kept for ``path`` under ``resolver``, or None."""
        known = self._answers.get((path, route_language(resolver)))
        return known if known is not None and known[0] is resolver else None

    def keep(self, path: str, resolver: object, match: ResolverMatch | None) -> None:
        """Keep ``match`` (None: not a view of the table's kind) for ``path``, as made by
        ``resolver``."""
        if resolver is not self._resolver or len(self._answers) >= self.limit:
            self._answers.clear()
            self._resolver = resolver
        self._answers[(path, route_language(resolver))] = (resolver, match)


#: Paths already resolved, with the match of the MCP view each routes to, or None for
#: another view's.
_routes = RouteTable(ROUTES_CACHED)


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
    known = _routes.entry(path, resolver)
    if known is not None:
        return known[1], True
    try:
        match = resolver.resolve(path)
    except Exception:  # Resolver404, or a converter's own error: Django's handler answers
        return None, False
    found = match if getattr(match.func, "mcp_server", None) is not None else None
    if captures_values(match):
        return found, False  # resolved again next time: see the module's docstring
    _routes.keep(path, resolver, found)
    return found, True
