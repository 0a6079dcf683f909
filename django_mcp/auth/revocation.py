"""Whether a credential, or the user it acts for, stopped being valid since it was checked.

A task acts with its creator's credential (ext-tasks ``tasks.md``, "Security
Considerations"), and a worker may run it long after the call that queued it: hours after,
behind a busy queue, or again after ``tasks/update``. Revoking a token is an operator's
"stop everything this credential does", so a run asks again. Only credentials whose state
this project can read are asked: this site's own tokens (``token:<pk>``, revoked or
deleted) and django-oauth-toolkit's (``dot:<pk>``, which revocation deletes). A JWT or an
introspected token cannot be asked without its text, which is never stored. A credential
that merely expired after the call does not stop the run: the call it made was valid.

A ``subscriptions/listen`` stream is one request that lasts: :func:`withdrawn` is what it
asks again while it is open (``LISTEN_RECHECK_SECONDS``), the credential and its user both.
"""

from __future__ import annotations

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
    kind, _, key = (credential or "").partition(":")
    if not key.isdigit():  # not an id this project made: nothing to ask
        return False
    if kind == "token":
        return not AccessToken.objects.filter(pk=int(key), revoked_at__isnull=True).exists()
    if kind == "dot" and apps.is_installed("oauth2_provider"):
        from oauth2_provider.models import get_access_token_model

        return not get_access_token_model()._default_manager.filter(pk=int(key)).exists()
    return False


def can_be_withdrawn(caller: Caller | None) -> bool:
    """Whether :func:`withdrawn` has anything to ask about ``caller``: a signed-in user, or
    a credential of this project's. An anonymous caller, or a JWT acting for no user, has
    nothing the database could take back, and costs no query."""
    if caller is None:
        return False
    kind, _, key = (caller.credential or "").partition(":")
    return caller.is_authenticated or (kind in ("token", "dot") and key.isdigit())


def withdrawn(caller: Caller | None) -> str | None:
    """Why ``caller`` may no longer act, or None while it still may: its token (this site's
    or django-oauth-toolkit's) was revoked or deleted, or its user was deleted or
    deactivated (every authenticator refuses an inactive user), or the Django session it
    signed in with no longer signs it in (:func:`signs_in`). At most three primary-key
    lookups; none for a caller :func:`can_be_withdrawn` says nothing about."""
    if caller is None or not can_be_withdrawn(caller):
        return None
    if is_revoked(caller.credential):
        return "its access token was revoked or deleted"
    if caller.is_authenticated:
        user = get_user_model()._default_manager.filter(pk=caller.user.pk).first()
        if user is None or not getattr(user, "is_active", True):
            return "its user was deleted or deactivated"
        if caller.session_key is not None and not signs_in(caller.session_key, user):
            return "its session ended (signed out, or the password changed)"
    return None


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
