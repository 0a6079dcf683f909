"""Rate limiting as the middleware applies it: who is asking, and the 429 answer.

The counting is :mod:`django_mcp.http.ratelimit`'s; this module supplies its inputs from
the request and turns an exceeded limit into the answer: HTTP 429 with ``Retry-After``
(RFC 6585 section 4, RFC 9110 section 10.2.3) and a JSON-RPC error with django-mcp's
application code (:class:`~django_mcp.protocol.errors.RateLimited`), or no body at all for
a notification, which never gets a JSON-RPC response (basic/index.mdx, "Notifications").
The spec asks servers to rate-limit tool invocations (server/tools.mdx, "Security
Considerations"); django-mcp limits every MCP request, before admission, so refused
traffic costs no parsing beyond the body read and no database query.

Under ASGI the counting runs in a thread, with authentication (the middleware decides
with :func:`rate_limited_at_all`): the cache may be Redis, whose client blocks. Nothing
happens, and no thread is used, while no limit is configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django_mcp.conf import mcp_settings
from django_mcp.http import ratelimit
from django_mcp.http.client_ip import counted_address
from django_mcp.http.responses import admission_response
from django_mcp.protocol import jsonrpc
from django_mcp.protocol.admission import Rejected
from django_mcp.protocol.errors import RateLimited

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

    from django_mcp.auth.caller import Caller
    from django_mcp.http.exchange import Exchange


def principal_key(caller: Caller | None) -> str | None:
    """The per-user limit's key: the caller's principal (``user:<pk>`` for a signed-in
    user, ``client:<id>`` for a token acting for no user), else None: anonymous requests
    are limited by address only. A client acting for itself is one party however many
    tokens it mints (each token is a new credential id to the per-token limit), so it is
    counted like a user."""
    if caller is None or not caller.has_credentials:
        return None
    return caller.principal


def refusal(exceeded: ratelimit.Exceeded, body: bytes) -> Rejected:
    """The rejection of a limited request, echoing its id and method when they can be read
    (only now: requests that pass are parsed once, by admission)."""
    error = RateLimited(exceeded.retry_after)
    try:
        message = jsonrpc.parse_message(body)
    except jsonrpc.MessageError as exc:
        return Rejected(error, exc.request_id, is_notification=exc.is_notification)
    if isinstance(message, jsonrpc.Notification):
        return Rejected(error, None, method=message.method, is_notification=True)
    return Rejected(error, message.id, method=message.method)


def throttle(request: HttpRequest, exchange: Exchange, body: bytes) -> HttpResponse | None:
    """Count the request; None to go on, or the 429 that ends the exchange.

    Runs after authentication, where the database may be used (a sync request, or a
    thread under ASGI): the caller the authenticators resolved names the user and the
    credential (a token) that the per-user and per-token limits count.
    """
    limits = ratelimit.configured_limits()
    if not limits:
        return None
    caller = exchange.caller
    exceeded = ratelimit.hit(
        user=principal_key(caller) if "user" in limits else None,
        credential=caller.credential if caller is not None else None,
        ip=counted_address(request.META),
        limits=limits,
    )
    if exceeded is None:
        return None
    rejected = refusal(exceeded, body)
    exchange.admission = rejected
    response = admission_response(rejected)
    assert response is not None  # a Rejected always has an answer
    response["Retry-After"] = str(exceeded.retry_after)
    return response


def rate_limited_at_all() -> bool:
    """Whether any rate limit is configured: then, under ASGI, admission runs in a thread
    (the cache client may block); with none, the event loop is never left for it."""
    return any(getattr(mcp_settings, name) for name in ratelimit.LIMIT_SETTINGS.values())
