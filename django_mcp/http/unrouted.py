"""The exchange of an MCP request another middleware refused before ``MCPMiddleware``
admitted it, opened after the response so that the request log keeps it.

Why: a hostile request must not leave no trace. ``MCPMiddleware`` opens an exchange in
``process_view``, which a refusal by another middleware pre-empts: one listed before it that
refuses in its own ``process_view`` (an IP block list, a rate limiter), or one it wraps
(listed after it) that refuses in ``process_request``, before Django resolves the URL. The
one that matters is ``CommonMiddleware``'s 400 for a ``Host`` outside ``ALLOWED_HOSTS``
(DNS rebinding), which the native paths record too.

What is not recorded: a refusal by a middleware listed before ``MCPMiddleware`` in its
``process_request`` (the request never reaches it), and a 404 answered before the URL was
resolved, which is taken for "no URL matched" (a middleware that hides an MCP URL with a
404 in ``process_request`` is not seen).
"""

from __future__ import annotations

import datetime
import logging
from time import perf_counter
from typing import TYPE_CHECKING

from django.urls import ResolverMatch, resolve

from django_mcp.http.exchange import begin, exchange_of, now

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponseBase

    from django_mcp.server.dispatch import MCPServer

logger = logging.getLogger("django_mcp")


def open_unrouted_exchange(
    request: HttpRequest, response: HttpResponseBase, started: float
) -> None:
    """Open the exchange of ``request`` when another middleware refused it on an MCP URL
    (``started``: the :func:`~time.perf_counter` reading when ``MCPMiddleware`` first saw
    it, so that the row's time and duration are the request's, not the response's).

    Only an error response without an exchange is looked at: other responses cost one
    comparison. The URL is resolved a second time only when Django never resolved it and
    the answer is not a 404, that is for a request refused before its URL was resolved
    (with ``MCPMiddleware`` listed first, any such refusal, of an MCP URL or not). Never
    raises: logging a refusal must not replace the refusal with a 500.
    """
    if response.status_code < 400 or exchange_of(request) is not None:
        return
    try:
        match: ResolverMatch | None = getattr(request, "resolver_match", None)
        if match is None:
            if response.status_code == 404:
                return
            match = _resolved(request)
        server: MCPServer | None = getattr(match.func, "mcp_server", None) if match else None
        if server is None:
            return
        exchange = begin(request, server.site, server)
        exchange.started = started
        exchange.started_at = now() - datetime.timedelta(seconds=perf_counter() - started)
        exchange.refused_upstream = True
    except Exception:
        logger.exception("django-mcp could not record a request another middleware refused")


def _resolved(request: HttpRequest) -> ResolverMatch | None:
    """``request``'s URL resolved as Django would, or None when nothing matches."""
    try:
        return resolve(request.path_info, getattr(request, "urlconf", None))
    except Exception:  # Resolver404, or a URLconf that fails: not an MCP URL we can name
        return None
