"""DRF permission classes asked about a ``ModelTools`` action, as a DRF view would ask them.

A permission class's ``has_permission(request, view)`` (and, for one row,
``has_object_permission(request, view, obj)``) expects a DRF ``Request`` whose
method says what the view does and a view with ``action``, ``queryset`` and ``kwargs``; an
MCP call has neither, so both are made for it: the HTTP method of the equivalent REST call
(``POST`` for create, ``PATCH`` for update...) and a stand-in view over the action.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from django.db.models import QuerySet
    from django.http import HttpRequest

    from django_mcp.modeltools.options import ModelTools
    from django_mcp.server.context import Context

#: The REST method each action stands for, as DRF's viewsets map them.
HTTP_METHODS: Final = {
    "list": "GET",
    "get": "GET",
    "create": "POST",
    "update": "PATCH",
    "delete": "DELETE",
}


def drf_allows(permission: Any, tools: ModelTools, ctx: Context, action: str) -> bool:
    """Whether the DRF permission instance lets the caller use ``action``; never off HTTP
    (a DRF permission reads the request)."""
    if ctx.request is None:
        return False
    view = ActionView(tools, ctx, action)
    try:
        return bool(permission.has_permission(drf_request(ctx.request, ctx, action), view))
    except refusals():
        return False


def drf_allows_object(
    permission: Any, tools: ModelTools, ctx: Context, action: str, obj: Any
) -> bool:
    """Whether the DRF permission instance lets the caller use ``action`` on the row
    ``obj``: its ``has_object_permission``, which DRF's ``get_object`` asks for a
    retrieve, update or destroy (an ``IsOwner`` class); never off HTTP."""
    if ctx.request is None:
        return False
    view = ActionView(tools, ctx, action)
    request = drf_request(ctx.request, ctx, action)
    try:
        return bool(permission.has_object_permission(request, view, obj))
    except refusals():  # DRF's view answers these 404 or 403: a refused row
        return False


def refusals() -> tuple[type[Exception], ...]:
    """What a DRF permission class raises to refuse, which a view answers 404 or 403:
    ``DjangoObjectPermissions`` raises ``Http404`` for a row the user may not read (its
    ``perms_map`` asks a view permission for ``GET``), and a class may raise DRF's or
    Django's ``PermissionDenied`` (or ``NotFound``, ``NotAuthenticated``) to give its
    message. Here each is the refusal it is, not an internal error (-32603)."""
    from django.core.exceptions import PermissionDenied
    from django.http import Http404
    from rest_framework import exceptions

    return (
        Http404,
        PermissionDenied,
        exceptions.PermissionDenied,
        exceptions.NotFound,
        exceptions.NotAuthenticated,
        exceptions.AuthenticationFailed,
    )


def checks_objects(permission: Any) -> bool:
    """Whether a ``permission_classes`` entry may refuse a row: it has a
    ``has_object_permission`` of its own (``BasePermission``'s allows every row). A
    composed one (``IsAuthenticated & IsOwner``) is taken to, as what it combines is not
    looked into."""
    from rest_framework.permissions import BasePermission

    own = getattr(permission, "has_object_permission", None)
    return own is not BasePermission.has_object_permission


def drf_request(over: HttpRequest, ctx: Context, action: str) -> Any:
    """A DRF ``Request`` over the call's HTTP request ``over``, with the method of the
    REST call ``action`` stands for and the caller as its user."""
    from django.contrib.auth.models import AnonymousUser
    from rest_framework.request import Request

    http_request = copy.copy(over)
    http_request.method = HTTP_METHODS[action]
    request = Request(http_request)
    # A bare Request has no authenticators, so it would see AnonymousUser: hand it the
    # caller that Django's permissions are checked against.
    user: Any = ctx.user if ctx.user is not None else AnonymousUser()
    request.user = user
    request.auth = None
    return request


class ActionView:
    """What DRF permission classes look for on a view: action, model queryset, kwargs."""

    def __init__(self, tools: ModelTools, ctx: Context, action: str) -> None:
        self.action = action
        self.kwargs: dict[str, Any] = {}
        self._tools, self._ctx = tools, ctx

    def get_queryset(self) -> QuerySet[Any]:
        return self._tools.get_queryset(self._ctx)

    @property
    def queryset(self) -> QuerySet[Any]:
        return self.get_queryset()
