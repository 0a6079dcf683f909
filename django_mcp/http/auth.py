"""Authentication and scope challenges on the HTTP path, called by the middleware.

After the ``Origin``, ``Host`` and size checks and before admission, :func:`authenticate`
resolves the caller (``AUTHENTICATORS``) and refuses invalid credentials, and anonymous
callers of a site that requires authentication, with 401. After admission,
:func:`authorize` answers a request for a declaration whose ``scopes_required`` the caller
lacks: 401 without credentials, 403 ``insufficient_scope`` with them (RFC 6750 section 3;
basic/authorization.mdx, "Error Handling"). Both answers carry a JSON-RPC error body
(-32600, the request's id when known) beside the ``WWW-Authenticate`` challenge.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from django.conf import settings
from django.db import DatabaseError

from django_mcp.auth import resolve
from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.metadata import bearer_challenge, metadata_urlpatterns
from django_mcp.conf import mcp_settings
from django_mcp.http.responses import error_response, reply_response
from django_mcp.protocol import errors, jsonrpc
from django_mcp.protocol.admission import Admission, Admitted
from django_mcp.server import outage
from django_mcp.server.authorization import declared_scopes, missing_scopes
from django_mcp.server.dispatch import Reply

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse
    from django.urls import URLPattern

    from django_mcp.auth.caller import Caller
    from django_mcp.http.exchange import Exchange
    from django_mcp.protocol.jsonrpc import RequestId
    from django_mcp.server.context import Context
    from django_mcp.sites import MCPSite


def needs_database(request: HttpRequest) -> bool:
    """Whether authenticating ``request`` may query the database (it carries something
    that looks like credentials); otherwise the caller is anonymous at no cost, or
    refused at no cost if it presents a bearer token no authenticator claims."""
    return resolve.has_credentials(request)


def authenticate(request: HttpRequest, exchange: Exchange) -> HttpResponse | None:
    """Resolve the caller into ``exchange``; a 401 response when it may not go on.

    With the database down the caller cannot be known: no caller is attached, and the
    exchange is marked (``caller_unknown``) so that :func:`authorize` answers it -32603
    with its id once admitted, whatever the credentials were (a session, a token, DRF's),
    while malformed requests are still refused (:mod:`django_mcp.server.outage`). It is
    never served as anonymous, nor as nobody: a request without credentials needs no
    database here and is served as usual.
    """
    site = exchange.site
    try:
        if needs_database(request):
            caller = resolve.authenticate(request)
        else:
            caller = resolve.attach_anonymous(request)
    except DatabaseError as exc:
        outage.log_unresolved_caller(exc)
        exchange.caller_unknown = type(exc).__name__
        return None
    except AuthenticationFailed as exc:
        resolve.attach(request, resolve.anonymous())
        exchange.caller = resolve.caller_of(request)
        return unauthorized(
            request, scopes=declared_scopes(site), error=exc.error, description=exc.description
        )
    exchange.caller = caller
    if not caller.is_authenticated:  # nobody's permissions to preload
        if site.requires_authentication:
            return unauthorized(request, scopes=declared_scopes(site))
        return None
    if site.varies_by_caller():
        preload_permissions(caller)
    return None


def refuse_unknown_caller(exchange: Exchange, body: bytes) -> HttpResponse | None:
    """On a site that requires authentication, the answer to a request whose credentials
    could not be checked (see :func:`authenticate`), before admission looks anything up:
    an anonymous caller gets a 401 before its body is read, so an unchecked one must not
    learn from admission which names exist. -32603 with the request's id, a refusal
    without a body for a notification, the usual answer to a malformed message; None on
    other sites, where :func:`unknown_caller_admitting` and :func:`authorize` apply."""
    if exchange.caller_unknown is None or not exchange.site.requires_authentication:
        return None
    try:
        message = jsonrpc.parse_message(body, max_depth=int(mcp_settings.MAX_JSON_DEPTH))
    except jsonrpc.MessageError as exc:
        return error_response(exc.error, exc.request_id, is_notification=exc.is_notification)
    if isinstance(message, jsonrpc.Notification):
        return error_response(errors.InternalError(), None, is_notification=True)
    return error_response(errors.InternalError(), message.id)


@contextmanager
def unknown_caller_admitting(request: HttpRequest, exchange: Exchange) -> Iterator[None]:
    """While admission runs, the ``request.user`` of a request whose credentials could not
    be checked is one that raises a database error when read
    (:func:`~django_mcp.server.outage.unresolvable_user`), so a permission lookup meets
    the outage (-32603 with the id) instead of an anonymous user (an "unknown" name for a
    good token). Put back afterwards: :func:`authorize` answers the admitted request, and
    nothing after the response (another middleware, the log) must meet it."""
    if exchange.caller_unknown is None:
        yield
        return
    saved = request.__dict__.get("user", _NO_USER)
    request.user = outage.unresolvable_user(exchange.caller_unknown)
    try:
        yield
    finally:
        if saved is _NO_USER:
            request.__dict__.pop("user", None)
        else:
            request.user = saved


_NO_USER: Final = object()


def preload_permissions(caller: Caller) -> None:
    """Resolve the user's Django permissions once, whatever the request names, so a
    hidden declaration and an unknown one cost the same queries (ModelBackend caches
    them on the user object, which every ``Context`` of the request shares). A superuser
    holds every permission without a query, so nothing is hidden from them."""
    user = caller.user
    if not caller.is_authenticated or getattr(user, "is_superuser", False):
        return
    if getattr(user, "is_active", False):
        get_all = getattr(user, "get_all_permissions", None)
        if get_all is not None:
            get_all()


def authorize(
    request: HttpRequest, exchange: Exchange, admission: Admission
) -> HttpResponse | None:
    """401/403 when the admitted request targets a declaration whose scopes the caller
    lacks; -32603 when its credentials could not be checked (see :func:`authenticate`);
    None to go on."""
    if not isinstance(admission, Admitted):
        return None
    if exchange.caller_unknown is not None:
        # As the exception handler answers a database error: with DEBUG, its class only.
        data = {"exception": exchange.caller_unknown} if settings.DEBUG else None
        error = errors.InternalError(data=data)
        exchange.reply = reply = Reply(admission.request.id, error=error)
        return reply_response(reply)
    built: list[Context] = []

    def context() -> Context:  # built at most once, and only if the check needs it
        if not built:
            built.append(exchange.server.context_for(admission, request=request))
        return built[0]

    missing = missing_scopes(exchange.site, admission, context)
    if not missing:
        return None
    request_id = admission.request.id
    if not context().caller.is_authenticated:
        return unauthorized(request, scopes=missing, request_id=request_id)
    return insufficient_scope(request, missing, request_id)


def unauthorized(
    request: HttpRequest,
    *,
    scopes: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
    request_id: RequestId | None = None,
) -> HttpResponse:
    """401 with a Bearer challenge (and those of other authenticators, e.g. DRF's)."""
    response = error_response(errors.Unauthenticated(description), request_id)
    bearer = bearer_challenge(
        request, request.path, scopes=scopes, error=error, description=description
    )
    others = [c for c in resolve.challenges(request) if not c.lower().startswith("bearer")]
    response["WWW-Authenticate"] = ", ".join([bearer, *others])
    return response


def insufficient_scope(
    request: HttpRequest, scopes: Iterable[str], request_id: RequestId | None
) -> HttpResponse:
    """403 ``insufficient_scope`` naming every scope the operation needs."""
    scopes = sorted(scopes)
    description = f"This operation needs the scopes: {' '.join(scopes)}"
    response = error_response(errors.InsufficientScope(description), request_id)
    response["WWW-Authenticate"] = bearer_challenge(
        request,
        request.path,
        scopes=scopes,
        error="insufficient_scope",
        description=description,
    )
    return response


def protected_resource_urls(mcp_path: str = "mcp", site: MCPSite | None = None) -> list[URLPattern]:
    """The RFC 9728 metadata of the endpoint at ``mcp_path``, at both well-known URIs;
    ``scopes_supported`` defaults to the scopes ``site``'s declarations require."""
    if site is None:
        from django_mcp.sites import site as default_site

        site = default_site
    chosen = site
    return metadata_urlpatterns(mcp_path, lambda: declared_scopes(chosen))
