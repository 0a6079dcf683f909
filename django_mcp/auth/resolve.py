"""Resolving the :class:`~.caller.Caller` of a request once, from ``AUTHENTICATORS``.

The authenticators named in ``DJANGO_MCP["AUTHENTICATORS"]`` are tried in order; the first
that recognises credentials wins, and one that finds them invalid ends the search with
:class:`~.base.AuthenticationFailed` (a 401, never a fall back to anonymous). So does a
bearer token that none of them accepted (:func:`refuse_unclaimed_bearer`). The caller is
attached to the request (:func:`caller_of`) so everything later in the request, the
``Context`` included, sees the same identity without authenticating again.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Final

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from django_mcp.auth.base import AuthenticationFailed, Authenticator
from django_mcp.auth.caller import Caller
from django_mcp.auth.header import presented
from django_mcp.conf import mcp_settings

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser
    from django.http import HttpRequest

_ATTRIBUTE: Final = "_django_mcp_caller"


@cache
def authenticators() -> tuple[Authenticator, ...]:
    """One instance of each class in ``AUTHENTICATORS``, in order (cached per settings)."""
    return tuple(import_string(path)() for path in mcp_settings.AUTHENTICATORS)


@cache
def _bearer_tokens_checked() -> bool:
    """Whether some authenticator in ``AUTHENTICATORS`` takes bearer tokens."""
    return any(auth.accepts_bearer_tokens for auth in authenticators())


@receiver(setting_changed)
def _forget_authenticators(*, setting: str, **kwargs: object) -> None:
    if setting == "DJANGO_MCP":
        authenticators.cache_clear()
        _bearer_tokens_checked.cache_clear()


#: Why a bearer token that no authenticator accepted is refused (see
#: :func:`refuse_unclaimed_bearer`).
UNCLAIMED_TOKEN: Final = "The access token is not valid for this server."


def presents_checked_bearer(request: HttpRequest) -> bool:
    """Whether ``request`` presents a bearer token and this site checks bearer tokens
    (some authenticator takes them). Then only such authenticators are asked, and the
    token is refused if none accepts it; a site that takes no bearer tokens at all (an
    empty ``AUTHENTICATORS``, sessions only) does not look at the header."""
    return presented(request) is not None and _bearer_tokens_checked()


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
    """Whether any authenticator may find credentials in ``request`` (no database).

    A loop, not ``any()`` over a generator: every request asks, and for an anonymous one
    (no authenticator says yes) the generator would be built and run to its end."""
    for auth in authenticators():  # noqa: SIM110 - no generator (see above)
        if auth.has_credentials(request):
            return True
    return False


def authenticate(request: HttpRequest) -> Caller:
    """The caller of ``request``, attached to it; may query the database (run it off the
    event loop). Raises :class:`~.base.AuthenticationFailed`."""
    token = presented(request)
    bearer = token is not None and _bearer_tokens_checked()
    if bearer and token is not None and not token.isascii():
        # RFC 6750's b64token is ASCII: anything else is no token of anyone's, and the
        # validators would fail to encode it (a digest, a JWT, a form post) rather than
        # refuse it.
        raise AuthenticationFailed("The Authorization header holds no valid bearer token.")
    for auth in authenticators():
        if bearer and not auth.accepts_bearer_tokens:
            continue  # a session does not vouch for a token beside it
        if auth.has_credentials(request):
            caller = auth.authenticate(request)
            if caller is not None:
                return attach(request, caller)
    if bearer:
        raise AuthenticationFailed(UNCLAIMED_TOKEN)
    return attach(request, anonymous())


def attach_anonymous(request: HttpRequest) -> Caller:
    """Make ``request`` anonymous, as one without credentials is, after
    :func:`refuse_unclaimed_bearer`; no database."""
    refuse_unclaimed_bearer(request)
    return attach(request, anonymous())


def refuse_unclaimed_bearer(request: HttpRequest) -> None:
    """Raise :class:`~.base.AuthenticationFailed` when ``request`` presents a bearer token
    and no authenticator accepted it: a token from another server, or of a kind no
    configured authenticator checks. Authenticators that do not take bearer tokens
    (``accepts_bearer_tokens``, the session's) are not asked then, so a session cookie
    beside such a token does not get it served either.

    Why not serve it as anonymous: a token this server cannot validate is an invalid
    token, and invalid tokens MUST receive a 401 (``basic/authorization.mdx``, "Token
    Handling"; RFC 6750 section 3.1, ``invalid_token``); only tokens issued for this
    server are accepted. Served anonymously, a client would take anonymous answers for its
    user's and never learn that it must sign in again. ``Basic`` and other schemes are
    left alone (a staging site behind a proxy's password sends ``Basic``). A site whose
    authenticators take no bearer tokens (none configured, or sessions only) does not
    check them, so nothing is refused.
    """
    if presents_checked_bearer(request):
        raise AuthenticationFailed(UNCLAIMED_TOKEN)


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
