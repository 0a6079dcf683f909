"""What the project's ``MIDDLEWARE`` does around :class:`~.middleware.MCPMiddleware`, read
once where Django builds the chain, and the shortcut that reading allows.

Two facts are read from the list:

- whether ``Host`` is validated before any view middleware runs
  (:func:`host_checked_upstream`), so the middleware need not check it a second time;
- whether Django's handler would do anything between ``MCPMiddleware.__call__`` and the
  MCP view beyond resolving the path, calling the middleware's own ``process_view`` and
  opening ``ATOMIC_REQUESTS``' transactions (:func:`shortcut_allowed`).

When it would not, the middleware serves a ``POST`` on a path it has seen Django route to
an MCP view (:class:`LearntRoutes`, :func:`learnable`) itself, with :func:`serve_route`:
the same ``resolver_match``, the same ``process_view``, the same view in the same
transactions, a failure turned into the response Django would make of it. What it skips
is the handler's work that decides nothing for that path: URL resolution through
``include()`` (two resolvers and three ``ResolverMatch`` objects), the loop over the view
middleware. On a ``tools/call`` that was about a seventh of the request's CPU in process
(121 to 102 µs, ``bench.hotpath``), and about a tenth under gunicorn: what Django's own
WSGI path lacked to reach the benchmark's targets (docs/benchmark.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from asgiref.sync import iscoroutinefunction
from django.core.handlers.exception import response_for_exception
from django.http import HttpRequest, HttpResponseBase
from django.middleware.common import CommonMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django.urls import ResolverMatch, get_resolver
from django.utils.module_loading import import_string

from django_mcp.http.framing import DJANGO_HANDLER
from django_mcp.http.routes import RouteTable, own_copy, resolved_anew_each_time

#: At most this many paths are learnt per middleware (then it starts again): an endpoint
#: is usually reachable at two (with and without its trailing slash), times the languages
#: of translated routes; a loose ``re_path`` could make any client's path one more.
ROUTES_LEARNT: Final = 64

ProcessView = Callable[
    [HttpRequest, Callable[..., Any], tuple[Any, ...], dict[str, Any]], HttpResponseBase | None
]
ProcessException = Callable[[HttpRequest, Exception], HttpResponseBase | None]


def _imported(middleware: Iterable[str]) -> list[object] | None:
    """The entries of ``middleware``, imported; None when one cannot be (Django will say
    so when it builds the chain)."""
    try:
        return [import_string(path) for path in middleware]
    except ImportError:
        return None


def host_checked_upstream(middleware: Iterable[str]) -> bool:
    """Whether the stack ``middleware`` (``MIDDLEWARE``) validates ``Host`` before any view
    middleware runs: Django's ``CommonMiddleware`` calls ``request.get_host()`` in
    ``process_request`` on every request, which raises ``DisallowedHost`` (a 400) for a
    host ``ALLOWED_HOSTS`` refuses, so a second check in ``process_view`` could never fail
    and costs as much as a tenth of admission. A subclass that overrides
    ``process_request`` may not call it, so only the unchanged method counts."""
    for path in middleware:
        try:
            found = import_string(path)
        except ImportError:
            continue
        if (
            isinstance(found, type)
            and issubclass(found, CommonMiddleware)
            and found.process_request is CommonMiddleware.process_request
        ):
            return True
    return False


def _decides_nothing_for_mcp(found: object) -> bool:
    """Whether a middleware class has no hook Django's handler calls between the chain and
    the view (``process_view``, ``process_exception``, ``process_template_response``: an
    ``MCPView`` subclass may answer a POST with a template response), or only Django's own
    ``CsrfViewMiddleware.process_view``, which returns None for a ``csrf_exempt`` view
    (``MCPView`` is one) and changes nothing. A middleware factory that is not a class
    cannot be read, so it counts as deciding something; nor can hooks an instance sets on
    itself, which Django would call."""
    if not isinstance(found, type):
        return False
    view_hook = getattr(found, "process_view", None)
    if view_hook is not None and view_hook is not CsrfViewMiddleware.process_view:
        return False
    return (
        getattr(found, "process_exception", None) is None
        and getattr(found, "process_template_response", None) is None
    )


def shortcut_allowed(middleware: Iterable[str], own_class: type) -> bool:
    """Whether an ``own_class`` instance may serve a learnt MCP route itself: it is the
    last entry of ``middleware`` (a middleware after it wraps the view, and would be
    skipped) and no other entry has a hook that runs between the chain and the view
    (:func:`_decides_nothing_for_mcp`)."""
    found = _imported(middleware)
    if not found or found[-1] is not own_class:
        return False
    return all(_decides_nothing_for_mcp(entry) for entry in found[:-1])


def learnable(match: ResolverMatch, path: str) -> bool:
    """Whether a match may be served again without resolving its path: a sync MCP view
    that is CSRF-exempt (so that ``CsrfViewMiddleware.process_view`` decides nothing; a
    subclass may have undone the exemption), reached with no path converter deciding it
    (:func:`~django_mcp.http.routes.resolved_anew_each_time` for ``path``: no captured
    values, no converter of the project's own asked on a route tried before; a
    converter's ``to_python`` may answer differently next time, a tenant closed or
    opened, a row gone; and with captured values any client could fill the table)."""
    func = match.func
    return (
        getattr(func, "mcp_server", None) is not None
        and getattr(func, "csrf_exempt", False) is True
        and not iscoroutinefunction(func)
        and not resolved_anew_each_time(match, path)
    )


class LearntRoutes:
    """The ``POST`` paths Django's resolver routed to an MCP view, with their match.

    Learnt from Django's own resolution (the ``resolver_match`` of a request the handler
    served), so a path of the project's other views costs one dict lookup that misses.
    Keyed by path, and by active language where the URLconf may route a path by language
    (:func:`~django_mcp.http.routes.route_language`). Forgotten at the first lookup
    after the URLconf changes (``ROOT_URLCONF`` overridden, ``clear_url_caches()``:
    :func:`~django.urls.get_resolver` returns another resolver); a URLconf's
    ``urlpatterns`` edited in place without ``clear_url_caches()`` is not seen (set
    ``MCPMiddleware.learns_routes = False`` in a subclass for that). Not used for a
    request with its own URLconf (``request.urlconf``, set by a middleware such as
    django-hosts): its path may route elsewhere. The table is a
    :class:`~django_mcp.http.routes.RouteTable`, as the native paths' memory is.
    """

    def __init__(self) -> None:
        #: Only matches of :func:`learnable` views are kept.
        self.table = RouteTable(ROUTES_LEARNT)

    def match(self, request: HttpRequest) -> ResolverMatch | None:
        """The learnt match of ``request``'s path, or None (Django's handler resolves it)."""
        if request.method != "POST":  # a browser's GET is answered with a TemplateResponse
            return None
        known = self.table.entry(request.path_info, get_resolver())
        if known is None or hasattr(request, "urlconf"):
            return None
        return known[1]

    def learn(self, request: HttpRequest) -> None:
        """Remember how Django routed ``request``, if to a :func:`learnable` MCP view.

        The path is resolved once more here, and that match is kept, with the resolver
        that made it: the URLconf may have changed while the request ran (another thread
        reloading it), and the match Django made then must not outlive that change."""
        match: ResolverMatch | None = getattr(request, "resolver_match", None)
        if (
            request.method != "POST"
            or match is None
            or hasattr(request, "urlconf")
            or not learnable(match, request.path_info)
        ):
            return
        resolver = get_resolver()
        if self.table.entry(request.path_info, resolver) is not None:
            return
        try:
            again = resolver.resolve(request.path_info)
        except Exception:  # Resolver404, a converter's error: Django's to answer next time
            return
        if not learnable(again, request.path_info):  # the URLconf now routes it elsewhere
            return
        self.table.keep(request.path_info, resolver, again)


def serve_route(
    request: HttpRequest,
    match: ResolverMatch,
    process_view: ProcessView,
    process_exception: ProcessException,
) -> HttpResponseBase:
    """What ``BaseHandler._get_response`` and its ``convert_exception_to_response`` wrapper
    do for ``match`` when the middleware's hooks are the only ones
    (:func:`shortcut_allowed`): ``request.resolver_match`` set (a copy of the learnt
    match), ``process_view``, then the view in ``ATOMIC_REQUESTS``' transactions (by
    Django's own ``make_view_atomic``, so that a tool patching it still sees the view),
    an exception from the view offered to ``process_exception``, the response checked
    as Django checks it (a view that returned None), a template response rendered (no
    ``process_template_response`` hook: :func:`shortcut_allowed` saw none, and a
    rendering's exception is offered to ``process_exception``), and any exception left
    answered by Django's ``response_for_exception`` (its 400, 403, 404 or 500, reported
    as Django reports them)."""
    request.resolver_match = own = own_copy(match)
    try:
        response = process_view(request, own.func, own.args, own.kwargs)
        if response is None:
            try:
                response = DJANGO_HANDLER.make_view_atomic(own.func)(
                    request, *own.args, **own.kwargs
                )
            except Exception as exc:
                response = process_exception(request, exc)
                if response is None:
                    raise
        DJANGO_HANDLER.check_response(response, own.func)
        if callable(getattr(response, "render", None)):  # a template response: no hooks
            try:
                response = response.render()  # type: ignore[attr-defined]
            except Exception as exc:
                response = process_exception(request, exc)
                if response is None:
                    raise
    except Exception as exc:
        return response_for_exception(request, exc)
    return response
