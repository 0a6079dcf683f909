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
- only answers that no path converter decided (:func:`resolved_anew_each_time`): made
  without captured values (:func:`captures_values`, an ``include()``'s prefix included),
  and with no converter of the project's own asked on a route tried before (one whose
  regular expression matched the path), since a converter's ``to_python`` may answer
  differently next time (a tenant closed or opened, a row gone), and with captured
  values any client could fill the memory with paths of its own (a loose ``re_path``
  lets it name new paths too: the memory is bounded); such a path is resolved on every
  request. A ``urlpatterns`` container of the project's own that yields other routes
  from one request to the next is not seen, as ``urlpatterns`` edited in place without
  ``clear_url_caches()`` are not;
- each answer with the resolver that made it, so that one resolved before a URLconf
  change, stored after it by a slower thread, is never served;
- the match itself, never handed out: each request gets a copy with its own lists and
  dicts (:func:`own_copy`), as under Django's handler each request has its own
  ``resolver_match`` to change.

:mod:`~django_mcp.http.stack` applies the same rules to the routes ``MCPMiddleware`` learns.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Final, TypeAlias

from django.urls import ResolverMatch, URLPattern, URLResolver, get_resolver
from django.urls.converters import DEFAULT_CONVERTERS
from django.urls.resolvers import LocalePrefixPattern, RegexPattern, RoutePattern
from django.utils.translation import get_language

#: An answer kept: the resolver that made it, and the match (None: another kind of view).
Entry: TypeAlias = tuple[object, ResolverMatch | None]
#: At most this many (path, language) answers are remembered (then it starts again).
ROUTES_CACHED = 1024
#: Django's own path converters (``int``, ``path``, ``slug``, ``str``, ``uuid``), whose
#: ``to_python`` reads nothing but the value; a converter of the project's own may read
#: the active language (a slug per language) and refuse a value in one language only.
DJANGO_CONVERTERS: Final = frozenset(type(converter) for converter in DEFAULT_CONVERTERS.values())
#: The resolver :func:`route_language` read last, and whether its URLconf's routes vary
#: by language (read once per resolver: :func:`varies_by_language` walks all of it).
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
    fixed URLconf may share one answer between languages. Walked when
    :func:`route_language` meets another resolver than the last (it keeps one answer);
    20,000 patterns took about 11 ms."""
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
    """Whether ``pattern`` matches the same paths in every language: one decided by the
    path alone (:func:`_decided_by_path`) but for the language prefix, whose text is a
    ``str``, which Django itself compiles once for all languages
    (``LocaleRegexDescriptor``)."""
    if type(pattern) is LocalePrefixPattern or not _decided_by_path(pattern):
        return False
    text = "_route" if type(pattern) is RoutePattern else "_regex"  # private to Django
    return isinstance(getattr(pattern, text, None), str)


def captures_values(match: ResolverMatch) -> bool:
    """Whether ``match`` was made with values captured from the path, which a path
    converter's ``to_python`` produced and may refuse next time: positional ones (a
    regular expression's unnamed groups), or a route that names one anywhere, an
    ``include()``'s prefix too (``match.route`` is the whole route: Django passes a
    prefix's values in ``kwargs`` only, and a value the URLconf's extra keywords replace
    was still converted)."""
    return bool(match.args) or "<" in (match.route or "")


def resolved_anew_each_time(match: ResolverMatch, path: str) -> bool:
    """Whether ``match``, Django's answer for ``path`` (a ``path_info``, from the root
    URLconf), must never be remembered, as something besides the path (and the language)
    decided it and may decide otherwise next time: it was made with captured values
    (:func:`captures_values`), or a route tried before it may have refused the path this
    time and take it next time (:func:`_refused_by_path`). A ``tried`` that is not
    Django's (code may change a request's match) cannot tell, so it is resolved anew
    too."""
    if captures_values(match):
        return True
    tried = match.tried
    if type(tried) is not list or not path.startswith("/"):
        return True
    # What the root resolver, get_resolver()'s RegexPattern(r"^/"), hands its routes.
    below_root = path[1:]
    return not all(_refused_by_path(chain, below_root) for chain in tried)


def _refused_by_path(chain: object, path: str) -> bool:
    """Whether one entry of a match's ``tried`` (the routes Django walked down, from the
    top of the URLconf, before it moved on) refused ``path`` by the path alone.

    A route of Django's own with Django's own converters does (:func:`_decided_by_path`):
    they decide by the value alone. A route with a converter of the project's own does
    only when its regular expression did not match what was left of the path, so its
    ``to_python`` was never asked; when it matched, ``to_python`` refused the value this
    time and may accept it next time (a closed tenant's ``<tenant>/mcp`` before the
    endpoint's ``acme/mcp`` takes that path once the tenant opens). A pattern or URL class
    of the project's own may decide as it likes.

    Why the regular expression is read at all: a project with such a converter anywhere
    before the endpoint (``shop/<product:item>/``, ``product`` its own) had its endpoint
    resolved on every request, 41 µs a lookup with 100 such routes before it, against 7 µs
    once remembered (keyed by language: such a converter may read it)."""
    if type(chain) is not list:
        return False
    left: str | None = path  # what the entry was tried on; None past a refusing prefix
    for entry in chain:
        if left is None or (type(entry) is not URLPattern and type(entry) is not URLResolver):
            return False
        pattern = entry.pattern
        if _decided_by_path(pattern):
            if type(entry) is URLResolver:  # the next entry was tried on what it left
                matched = pattern.match(left)
                left = matched[0] if matched else None
            continue
        # The test RoutePattern.match makes before it asks a converter.
        if type(pattern) is not RoutePattern or pattern.regex.search(left) is not None:
            return False
        left = None  # refused by its regular expression: nothing below it was tried
    return True


def _decided_by_path(pattern: object) -> bool:
    """Whether ``pattern`` matches or refuses a path by the path alone (and the active
    language, which the key holds where it matters): Django's own patterns, with Django's
    own converters."""
    if type(pattern) is RoutePattern:
        return _django_converters_only(pattern)
    return type(pattern) is RegexPattern or type(pattern) is LocalePrefixPattern


def _django_converters_only(pattern: RoutePattern) -> bool:
    return all(type(converter) in DJANGO_CONVERTERS for converter in pattern.converters.values())


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


class RouteTable:
    """Answers of Django's resolver kept per path, and per active language where the
    URLconf's routes vary by it (:func:`route_language`), each with the resolver that made
    it (an ``Entry``: the resolver, the match), at most ``limit`` of them (then it starts
    again). Both memories keep theirs in one: this module's, for the native paths, and
    the routes ``MCPMiddleware`` learns (:class:`~django_mcp.http.stack.LearntRoutes`).

    An answer is taken only with the resolver that made it, so one made before a URLconf
    change (``ROOT_URLCONF`` overridden, ``clear_url_caches()``: Django's
    ``get_resolver()`` returns another resolver) is never taken after it, whatever the
    order in which two threads resolve, keep and look up. The table holds the answers of
    one resolver (kept under a lock: checking whose answers it holds and keeping one are
    one step), so an answer kept with another resolver, or a lookup with another
    resolver that finds no answer of its own, empties it: no old answer lingers under a
    key no request asks for any more (another language, or none), keeping the old
    URLconf alive."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._answers: dict[tuple[str, str | None], Entry] = {}
        self._resolver: object = None  # that of every answer in the table
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._answers)

    def __iter__(self) -> Iterator[tuple[str, str | None]]:
        """The keys kept: (path, language or None)."""
        return iter(list(self._answers))

    def entry(self, path: str, resolver: object) -> Entry | None:
        """What is kept for ``path`` under ``resolver``, or None."""
        known = self._answers.get((path, route_language(resolver)))
        if known is not None and known[0] is resolver:
            return known
        if self._resolver is not resolver and self._resolver is not None:
            with self._lock:  # the URLconf changed: every answer is old, whatever its key
                if self._resolver is not resolver:
                    self._answers.clear()
                    self._resolver = None
        return None

    def keep(self, path: str, resolver: object, match: ResolverMatch | None) -> None:
        """Keep ``match`` (None: not a view of the table's kind) for ``path``, as made by
        ``resolver``."""
        key = (path, route_language(resolver))
        with self._lock:
            if resolver is not self._resolver or len(self._answers) >= self.limit:
                self._answers.clear()
                self._resolver = resolver
            self._answers[key] = (resolver, match)


#: Paths already resolved, with the match of the MCP view each routes to, or None for
#: another view's.
_routes = RouteTable(ROUTES_CACHED)


def mcp_match_at(path: str) -> ResolverMatch | None:
    """How ``path`` resolves (as Django will resolve it, in the active language) when it
    routes to an MCP view, as a match of the caller's own, or None. The memory forgets
    everything at its first lookup after the URLconf changes (``ROOT_URLCONF``
    overridden, ``clear_url_caches()``) and when it holds :data:`ROUTES_CACHED` answers.

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
    if resolved_anew_each_time(match, path):
        return found, False  # see the module's docstring
    _routes.keep(path, resolver, found)
    return found, True
