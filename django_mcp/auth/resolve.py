"""Resolving the :class:`~.caller.Caller` of a request once, from ``AUTHENTICATORS``.

The authenticators named in ``DJANGO_MCP["AUTHENTICATORS"]`` are tried in order; the first
that recognises credentials wins, and one that finds them invalid ends the search with
:class:`~.base.AuthenticationFailed` (a 401, never a fall back to anonymous). The caller is
attached to the request (:func:`caller_of`) so everything later in the request, the
``Context`` included, sees the same identity without authenticating again.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Final

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from django_mcp.auth.base import Authenticator
from django_mcp.auth.caller import Caller
from django_mcp.conf import mcp_settings

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser
    from django.http import HttpRequest

_ATTRIBUTE: Final = "_django_mcp_caller"


@cache
def authenticators() -> tuple[Authenticator, ...]:
    """One instance of each class in ``AUTHENTICATORS``, in order (cached per settings)."""
    return tuple(import_string(path)() for path in mcp_settings.AUTHENTICATORS)


@receiver(setting_changed)
def _forget_authenticators(*, setting: str, **kwargs: object) -> None:
    if setting == "DJANGO_MCP":
        authenticators.cache_clear()


def anonymous() -> Caller:
    """The caller of a request that carries no credentials (a new ``AnonymousUser`` each
    time: other code may set attributes on ``request.user``)."""
    return Caller(_anonymous_user_class()())


@cache
def _anonymous_user_class() -> type[AnonymousUser]:
    # Imported on first use: the middleware imports this module before the app registry
    # is ready.
    from django.contrib.auth.models import AnonymousUser

    return AnonymousUser


def has_credentials(request: HttpRequest) -> bool:
    """Whether any authenticator may find credentials in ``request`` (no database)."""
    return any(auth.has_credentials(request) for auth in authenticators())


def authenticate(request: HttpRequest) -> Caller:
    """The caller of ``request``, attached to it; may query the database (run it off the
    event loop). Raises :class:`~.base.AuthenticationFailed`."""
    caller = None
    for auth in authenticators():
        if auth.has_credentials(request):
            caller = auth.authenticate(request)
            if caller is not None:
                break
    return attach(request, caller or anonymous())


def attach(request: HttpRequest, caller: Caller) -> Caller:
    """Make ``caller`` the identity of ``request`` for the rest of the request:
    :func:`caller_of` returns it and ``request.user`` is its user."""
    setattr(request, _ATTRIBUTE, caller)
    request.user = caller.user
    return caller


def caller_of(request: HttpRequest | None) -> Caller | None:
    """The caller resolved for ``request``, or None when none was (no MCP middleware)."""
    caller: Caller | None = getattr(request, _ATTRIBUTE, None)
    return caller


def challenges(request: HttpRequest) -> list[str]:
    """The ``WWW-Authenticate`` challenges the authenticators offer, in order."""
    found = (auth.challenge(request) for auth in authenticators())
    return [value for value in found if value]
