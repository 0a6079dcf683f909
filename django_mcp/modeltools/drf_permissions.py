"""DRF permission classes asked about a ``ModelTools`` action, as a DRF view would ask them.

A permission class's ``has_permission(request, view)`` expects a DRF ``Request`` whose
method says what the view does and a view with ``action``, ``queryset`` and ``kwargs``; an
MCP call has neither, so both are made for it: the HTTP method of the equivalent REST call
(``POST`` for create, ``PATCH`` for update...) and a stand-in view over the action.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from django.db.models import QuerySet

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
    from django.contrib.auth.models import AnonymousUser
    from rest_framework.request import Request

    http_request = copy.copy(ctx.request)
    http_request.method = HTTP_METHODS[action]
    drf_request = Request(http_request)
    # A bare Request has no authenticators, so it would see AnonymousUser: hand it the
    # caller that Django's permissions are checked against.
    user: Any = ctx.user if ctx.user is not None else AnonymousUser()
    drf_request.user = user
    drf_request.auth = None
    return bool(permission.has_permission(drf_request, ActionView(tools, ctx, action)))


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
