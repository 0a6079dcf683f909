"""Permission checks for declarations, built from what Django users already have.

A declaration may carry a check ``(Context) -> bool``. A tool, resource or prompt whose
check fails is absent from every list and answers exactly like an unknown one, so callers
cannot probe for what they may not use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django_mcp.server.context import Context

PermissionCheck = Callable[["Context"], bool]
#: The attribute on a combined check that keeps what it was built from, for
#: ``manage.py mcp_inspect``: ``(permission_required, custom check or None)``.
PERMISSION_SOURCE = "mcp_permission_source"


def normalise_perms(permission_required: str | Sequence[str] | None) -> tuple[str, ...]:
    if permission_required is None:
        return ()
    if isinstance(permission_required, str):
        return (permission_required,)
    return tuple(permission_required)


def normalise_scopes(scopes_required: str | Sequence[str] | None) -> frozenset[str]:
    """``scopes_required`` as a set; a string may hold several space-separated scopes."""
    if scopes_required is None:
        return frozenset()
    if isinstance(scopes_required, str):
        return frozenset(scopes_required.split())
    return frozenset(scope for item in scopes_required for scope in item.split())


def has_django_perms(context: Context, perms: Sequence[str]) -> bool:
    """Whether the request's user holds every Django permission in ``perms``."""
    user = context.user
    if user is None or not user.is_active:
        return False
    return bool(user.has_perms(perms))


def combine(
    permission_required: str | Sequence[str] | None, permission: PermissionCheck | None
) -> PermissionCheck | None:
    """One check from ``permission_required`` (Django perms) and a custom ``permission``."""
    perms = normalise_perms(permission_required)
    if not perms and permission is None:
        return None

    def check(context: Context) -> bool:
        if perms and not has_django_perms(context, perms):
            return False
        return permission is None or bool(permission(context))

    setattr(check, PERMISSION_SOURCE, (perms, permission))
    return check
