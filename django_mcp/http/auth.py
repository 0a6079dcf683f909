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

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import DatabaseError, DataError

from django_mcp.auth import header, resolve
from django_mcp.auth.base import AuthenticationFailed
from django_mcp.auth.metadata import bearer_challenge, metadata_urlpatterns
from django_mcp.conf import mcp_settings
from django_mcp.db_refusals import mysql_refused_value
from django_mcp.http.responses import admission_response, error_response, reply_response
from django_mcp.protocol import errors
from django_mcp.protocol.admission import Admission, Admitted, refuse_unverified
from django_mcp.server import outage
from django_mcp.server.authorization import (
    declared_scopes,
    missing_scopes,
    scope_refusal,
    scopes_description,
)
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

    With the database down (while authenticating, or preloading the caller's
    permissions) the caller cannot be known: the exchange is marked (``caller_unknown``),
    whatever the credentials were (a session, a token, DRF's), and the request is
    answered -32603 with its id, before admission where admission would need the caller
    (:func:`refuse_unknown_caller`), else once admitted (:func:`authorize`); malformed
    requests are still refused (:mod:`django_mcp.server.outage`). It is never served as
    anonymous, nor as nobody: a request without credentials needs no database here and
    is served as usual. A database error refusing a value the credentials carry
    (:func:`refused_value`) is no outage: those credentials are a 401.
    """
    site = exchange.site
    try:
        if needs_database(request):
            caller = resolve.authenticate(request)
        else:
            caller = resolve.attach_anonymous(request)
        if caller.is_authenticated and site.varies_by_caller():
            preload_permissions(caller)
    except DatabaseError as exc:
        if not refused_value(exc):
            outage.log_unresolved_caller(exc)
            exchange.caller_unknown = type(exc).__name__
            return None
        return refuse_credentials(request, exchange, AuthenticationFailed(UNREADABLE_CREDENTIALS))
    except AuthenticationFailed as exc:
        return refuse_credentials(request, exchange, exc)
    exchange.caller = caller
    if not caller.has_credentials and site.requires_authentication:
        return unauthorized(request, scopes=declared_scopes(site))
    return None


def refuse_credentials(
    request: HttpRequest, exchange: Exchange, failed: AuthenticationFailed
) -> HttpResponse:
    """The 401 of credentials that were presented and are not valid; the request is
    logged as anonymous. The Bearer challenge names the error only when a bearer token
    failed: credentials of another scheme (DRF's Basic or Token) carried no bearer token,
    and RFC 6750 section 3.1 says such a challenge then carries no error; the body still
    says why, beside the failed scheme's own challenge."""
    resolve.attach(request, resolve.anonymous())
    exchange.caller = resolve.caller_of(request)
    bearer_failed = header.presented(request) is not None
    return unauthorized(
        request,
        scopes=declared_scopes(exchange.site),
        error=failed.error if bearer_failed else None,
        description=failed.description if bearer_failed else None,
        answer=errors.Unauthenticated(failed.description),
    )


#: Why credentials the database refused to look up are a 401 (see :func:`refused_value`).
UNREADABLE_CREDENTIALS = "The credentials hold a value no account of this server has."


def refused_value(exc: DatabaseError) -> bool:
    """Whether ``exc`` is the database refusing a value the credentials carried (a NUL in
    a Basic username, which PostgreSQL refuses in text: ``DataError``; MySQL's refusals of
    a value), not the database being down. Such credentials name nobody: a 401, never the
    -32603 and the outage in the log that an unreachable database gets."""
    return isinstance(exc, DataError) or mysql_refused_value(exc)


def refuse_unknown_caller(exchange: Exchange, body: bytes) -> HttpResponse | None:
    """The answer, before admission, to a request whose credentials could not be checked
    (see :func:`authenticate`) on a site where admission would need the caller: one that
    requires authentication (an anonymous caller gets a 401 before its body is parsed) or
    whose declarations are gated by permissions (a hidden name answers like an unknown
    one only when the caller is known). Either way an unchecked caller must learn no
    more than an anonymous one, so the catalogue is not consulted: -32603 with the
    request's id, a refusal without a body for a notification, the usual answer to a
    malformed message. None elsewhere: admission needs no caller there, and
    :func:`authorize` answers the admitted request."""
    site = exchange.site
    if exchange.caller_unknown is None:
        return None
    if not (site.requires_authentication or site.varies_by_caller()):
        return None
    depth = int(mcp_settings.MAX_JSON_DEPTH)
    refused = refuse_unverified(body, unknown_caller_error(exchange), max_depth=depth)
    exchange.admission = refused  # for the request log: method, target, id
    return admission_response(refused)


def unknown_caller_error(exchange: Exchange) -> errors.InternalError:
    """-32603 for a caller that could not be checked; with ``DEBUG``, the database error's
    class only (its text names the server), as the exception handler answers one."""
    name = exchange.caller_unknown
    return errors.InternalError(data={"exception": name} if settings.DEBUG and name else None)


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
        exchange.reply = reply = Reply(admission.request.id, error=unknown_caller_error(exchange))
        return reply_response(reply)
    built: list[Context] = []

    def context() -> Context:
        """Built at most once, and only if the check needs it (a closure: a
        ``functools.cache`` wrapper per request cost about 1 us to build)."""
        if not built:
            built.append(exchange.server.context_for(admission, request=request))
        return built[0]

    try:
        with outage.DATABASE_NEEDED:  # a permission check or a task's tool may need it
            missing = missing_scopes(exchange.site, admission, context)
    except errors.InternalError as error:
        exchange.reply = reply = Reply(admission.request.id, error=error)
        return reply_response(reply)
    if not missing:
        return None
    request_id = admission.request.id
    refusal = scope_refusal(context().caller, missing)
    if isinstance(refusal, errors.InsufficientScope):
        response = insufficient_scope(request, missing, request_id, answer=refusal)
    else:
        response = unauthorized(request, scopes=missing, request_id=request_id, answer=refusal)
    # The request was admitted, so its log row reads the error from the reply.
    exchange.reply = Reply(request_id, error=refusal)
    return response


def unauthorized(
    request: HttpRequest,
    *,
    scopes: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
    request_id: RequestId | None = None,
    answer: errors.MCPError | None = None,
) -> HttpResponse:
    """401 with a Bearer challenge (and those of other authenticators, e.g. DRF's);
    ``answer`` is the JSON-RPC error of the body (by default -32600 with ``description``)."""
    answer = answer or errors.Unauthenticated(description)
    response = error_response(answer, request_id)
    bearer = bearer_challenge(
        request, request.path, scopes=scopes, error=error, description=description
    )
    others = [c for c in resolve.challenges(request) if not c.lower().startswith("bearer")]
    response["WWW-Authenticate"] = ", ".join([bearer, *others])
    return response


def insufficient_scope(
    request: HttpRequest,
    scopes: Iterable[str],
    request_id: RequestId | None,
    *,
    answer: errors.MCPError | None = None,
) -> HttpResponse:
    """403 ``insufficient_scope`` naming every scope the operation needs; ``answer`` is the
    JSON-RPC error of the body (by default -32600 saying so)."""
    scopes = sorted(scopes)
    description = scopes_description(scopes)
    response = error_response(answer or errors.InsufficientScope(description), request_id)
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
