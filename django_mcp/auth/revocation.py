"""Whether a credential a task was created with has been revoked since.

A task acts with its creator's credential (ext-tasks ``tasks.md``, "Security
Considerations"), and a worker may run it long after the call that queued it: hours after,
behind a busy queue, or again after ``tasks/update``. Revoking a token is an operator's
"stop everything this credential does", so a run asks again. Only credentials whose state
this project can read are asked: this site's own tokens (``token:<pk>``, revoked or
deleted) and django-oauth-toolkit's (``dot:<pk>``, which revocation deletes). A JWT or an
introspected token cannot be asked without its text, which is never stored. A credential
that merely expired after the call does not stop the run: the call it made was valid.
"""

from __future__ import annotations

from django.apps import apps

from django_mcp.auth.models import AccessToken


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
