"""The HTTP face of the server's outcomes: one table from outcome to status and body.

Nothing here decides a protocol rule or writes error text: it maps an
:data:`~django_mcp.protocol.admission.Admission` variant or a
:class:`~django_mcp.server.dispatch.Reply` to an ``HttpResponse``
(basic/transports/streamable-http.mdx, "Sending Messages to the Server").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, assert_never

from django.http import HttpResponse

from django_mcp.protocol import errors, jsonrpc
from django_mcp.protocol.admission import Admission, Admitted, NotificationAccepted, Rejected

if TYPE_CHECKING:
    from django_mcp.server.dispatch import Reply

JSON_CONTENT_TYPE: Final = "application/json"

#: HTTP status per error class; subclasses inherit their nearest listed ancestor's status.
STATUS_BY_ERROR: Final[dict[type[errors.MCPError], int]] = {
    errors.ParseError: 400,
    errors.InvalidRequest: 400,
    errors.RequestTooLarge: 413,
    errors.ForbiddenOrigin: 403,
    errors.Unauthenticated: 401,
    errors.InsufficientScope: 403,
    errors.MethodNotFound: 404,
    errors.InvalidParams: 200,
    errors.InvalidRequestMeta: 400,
    errors.InternalError: 200,
    errors.HeaderMismatch: 400,
    errors.MissingRequiredClientCapability: 400,
    errors.UnsupportedProtocolVersion: 400,
    errors.RateLimited: 429,
    errors.TooManyCallerStreams: 429,
    errors.ListenUnavailable: 503,
}


def status_for(error: errors.MCPError) -> int:
    for cls in type(error).__mro__:
        status = STATUS_BY_ERROR.get(cls)
        if status is not None:
            return status
    return 200


def empty_response(status: int) -> HttpResponse:
    """A response with no body, and so no ``Content-Type``: Django's ``HttpResponse`` would
    label the empty body ``text/html; charset=utf-8``, describing content that is not there
    (a 202 to a notification, a 405, a refused notification)."""
    response = HttpResponse(status=status)
    del response["Content-Type"]
    return response


def json_response(message: dict[str, Any], status: int = 200) -> HttpResponse:
    body = jsonrpc.dumps(message)
    if status == 200:  # HttpResponse's own default: no int() and range check of it
        return HttpResponse(body, content_type=JSON_CONTENT_TYPE)
    return HttpResponse(body, status=status, content_type=JSON_CONTENT_TYPE)


def error_response(
    error: errors.MCPError, request_id: jsonrpc.RequestId | None, *, is_notification: bool = False
) -> HttpResponse:
    """An error as HTTP: its status, and a JSON-RPC body unless it answers a notification."""
    status = status_for(error)
    if is_notification:
        return empty_response(status if status >= 400 else 400)
    return json_response(jsonrpc.error_response(error, request_id), status)


def admission_response(admission: Admission) -> HttpResponse | None:
    """The response that ends the exchange at admission, or None to run the view."""
    match admission:
        case Admitted():
            return None
        case NotificationAccepted():
            return empty_response(202)
        case Rejected():
            return error_response(
                admission.error, admission.request_id, is_notification=admission.is_notification
            )
        case _:
            assert_never(admission)


def reply_response(reply: Reply) -> HttpResponse:
    """A dispatched request's reply as one JSON-RPC response body (its error's status)."""
    if reply.error is not None:
        return error_response(reply.error, reply.request_id)
    return json_response(reply.to_message())


def internal_error() -> HttpResponse:
    """What a failure of django-mcp itself is answered with on a native path: a JSON-RPC
    internal error with status 500, never Django's HTML page."""
    return json_response(jsonrpc.error_response(errors.InternalError(), None), status=500)


def method_not_allowed() -> HttpResponse:
    """405 for anything but POST: 2026-07-28 has no GET stream and no DELETE."""
    response = empty_response(405)
    response["Allow"] = "POST"
    return response
