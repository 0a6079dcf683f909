"""Whether a credential, or the user it acts for, stopped being valid since it was checked.

A task acts with its creator's credential (ext-tasks ``tasks.md``, "Security
Considerations"), and a worker may run it long after the call that queued it: hours after,
behind a busy queue, or again after ``tasks/update``. Revoking a token is an operator's
"stop everything this credential does", so a run asks again. Only credentials whose state
this project can read are asked: this site's own tokens (``token:<pk>``, revoked or
deleted) and django-oauth-toolkit's (``dot:<pk>``, which revocation deletes). A JWT or an
introspected token cannot be asked without its text, which is never stored. A credential
that merely expired after the call does not stop the run: the call it made was valid.

A ``subscriptions/listen`` stream is one request that lasts: :func:`current` is what it
asks again while it is open (``LISTEN_RECHECK_SECONDS``), the credential and its user both,
and what it then decides with.
"""

from __future__ import annotations

import datetime
from dataclasses import replace
from importlib import import_module
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.core.exceptions import ValidationError
from django.utils.crypto import constant_time_compare

from django_mcp.auth.models import AccessToken

if TYPE_CHECKING:
    from django_mcp.auth.caller import Caller


def is_revoked(credential: str | None) -> bool:
    """Whether ``credential`` (a :attr:`Caller.credential` as stored on a task) is one of
    this project's tokens that was revoked or deleted since."""
    return _credential_now(credential) is None


def can_be_withdrawn(caller: Caller | None) -> bool:
    """Whether :func:`current` has anything to ask about ``caller``: a signed-in user, or
    a credential of this project's. An anonymous caller, or a JWT acting for no user, has
    nothing the database could take back, and costs no query."""
    if caller is None:
        return False
    kind, _, key = (caller.credential or "").partition(":")
    return caller.is_authenticated or (kind in ("token", "dot") and key.isdigit())


def user_is_stored(caller: Caller) -> bool:
    """Whether what the caller acts as can be read again from the database alone: nobody
    signed in (an anonymous caller, a token acting for no user), or a row of the user
    model. False for a user an authenticator built itself (a DRF class's stateless token
    user, ``rest_framework_simplejwt``'s ``TokenUser``): all that shares its identity in
    the database is the row with its pk, which may hold more permissions. So a task,
    whose runs rebuild their caller from what was stored, cannot act as it, and a re-read
    (:func:`current`) keeps it as it is."""
    return not caller.is_authenticated or isinstance(caller.user, get_user_model())


def current(caller: Caller) -> Caller | str:
    """``caller`` as the database describes it now, or why it may no longer act: its
    token (this site's or django-oauth-toolkit's) was revoked or deleted, or its user was
    deleted or deactivated (every authenticator refuses an inactive user), or the Django
    session it signed in with no longer signs it in (:func:`signs_in`).

    While it may, the caller comes back re-read, for what outlives one request (a listen
    stream) to decide with as the caller's next request would: a fresh instance of its
    user, whose permissions and groups are read again (Django's backends cache them on the
    instance, which a stream would otherwise keep for its whole life; a user that is no
    row of the user model, which a DRF class may build, is kept), and its token's
    scopes and expiry as they are now (django-oauth-toolkit's admin edits them; this
    site's tokens can be changed in code). A token that now acts for another user (or for
    none) no longer vouches for this caller. At most three primary-key lookups; none for
    a caller :func:`can_be_withdrawn` says nothing about."""
    if not can_be_withdrawn(caller):
        return caller
    credential = _credential_now(caller.credential)
    if credential is None:
        return "its access token was revoked or deleted"
    user_pk = caller.user.pk if caller.is_authenticated else None
    if credential.pop("acts_for", user_pk) != user_pk:
        return "its access token now acts for another user"
    if caller.is_authenticated:
        is_row = user_is_stored(caller)
        # Read as the class the authenticator gave (a backend's proxy keeps its checks;
        # ``__class__``, not ``type()``: a session's user is a lazy object).
        row_of = caller.user.__class__ if is_row else get_user_model()
        user = row_of._default_manager.filter(pk=user_pk).first()
        if user is None or not getattr(user, "is_active", True):
            return "its user was deleted or deactivated"
        if caller.session_key is not None and not signs_in(caller.session_key, user):
            return "its session ended (signed out, or the password changed)"
        if is_row:
            # Only a row is replaced by a row: a user an authenticator built itself (a DRF
            # class's stateless token user) is what every request of the caller decides
            # with, not the database row that shares its pk, which may hold more.
            credential["user"] = user
    return replace(caller, **credential)


def _credential_now(credential: str | None) -> dict[str, Any] | None:
    """The scopes and expiry a :attr:`Caller.credential` of this project's grants now,
    and the pk of the user it acts for (``acts_for``, not a :class:`Caller` field); nothing
    for a credential it cannot read, whose scopes and expiry stand; None when the token
    was revoked or deleted. Scopes are read as the authenticators read them
    (:class:`~django_mcp.auth.tokens.TokenAuthenticator`, ``DOTAuthenticator``)."""
    kind, _, key = (credential or "").partition(":")
    if not key.isdigit():  # not an id this project made: nothing to ask
        return {}
    if kind == "token":
        token = AccessToken.objects.filter(pk=int(key), revoked_at__isnull=True).first()
        if token is None:
            return None
        return {
            "scopes": token.scope_set,
            "expires_at": _timestamp(token.expires_at),
            "acts_for": token.user_id,
        }
    if kind == "dot" and apps.is_installed("oauth2_provider"):
        from oauth2_provider.models import get_access_token_model

        from django_mcp.auth.oauth.claims import scopes_of

        found = get_access_token_model()._default_manager.filter(pk=int(key)).first()
        if found is None:
            return None
        scopes = scopes_of({"scope": found.scope})
        return {
            "scopes": scopes,
            "expires_at": _timestamp(found.expires),
            "acts_for": found.user_id,
        }
    return {}


def _timestamp(moment: datetime.datetime | None) -> float | None:
    return None if moment is None else moment.timestamp()


def signs_in(session_key: str, user: Any) -> bool:
    """Whether the Django session ``session_key`` still signs ``user`` in, by the rules
    of ``django.contrib.auth.get_user`` (which every request of a session caller goes
    through) but reading only: the session exists and has not expired (a sign-out
    deletes it), names this user and a backend still configured, and carries the hash of
    the user's current password (changing it signs every other session out). A hash
    that matches only a ``SECRET_KEY_FALLBACKS`` key counts as ended: ``get_user`` would
    re-key that session, which a check must not do, and the client's next request does."""
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key).load()
    try:
        pk = type(user)._meta.pk.to_python(session[SESSION_KEY])
    except (KeyError, ValidationError):
        return False
    if pk != user.pk or session.get(BACKEND_SESSION_KEY) not in settings.AUTHENTICATION_BACKENDS:
        return False
    if not hasattr(user, "get_session_auth_hash"):
        return True
    session_hash = session.get(HASH_SESSION_KEY)
    return bool(session_hash) and constant_time_compare(session_hash, user.get_session_auth_hash())
