"""The :class:`Caller`: who is asking, resolved once per request.

Everything that binds state to a caller (pagination cursors, ``requestState``, rate
limits, tasks) uses :attr:`Caller.principal`; everything that decides what a caller may
see uses :attr:`Caller.user` and :attr:`Caller.scopes`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django_mcp.conf import mcp_settings


@dataclass(frozen=True, slots=True)
class Caller:
    """The identity behind one request."""

    #: A Django user (``AnonymousUser`` when nobody signed in).
    user: Any
    #: The scopes the credential grants; None when the credential is not limited by scopes
    #: (a Django session, a DRF authentication without scopes).
    scopes: frozenset[str] | None = None
    #: A stable, non-secret id of the credential (``token:42``, an OAuth ``jti`` or client
    #: id): for rate limits and logs. Never the secret itself. ``token:<pk>`` and
    #: ``dot:<pk>`` are reserved for this site's and django-oauth-toolkit's token rows,
    #: which :mod:`.revocation` reads again; another authenticator uses its own prefix.
    credential: str | None = None
    #: How the caller was authenticated: "anonymous", "session", "drf", "token", "oauth",
    #: "environment" (stdio) ...
    method: str = "anonymous"
    #: The OAuth client a token was issued to (its ``client_id``), when the validator knows
    #: it: what a token acting for no user (``client_credentials``) is bound to.
    client: str | None = None
    #: When the credential stops being valid (POSIX seconds): a token's expiry, or None
    #: when it does not expire or the authenticator does not know. What outlives one
    #: request (a ``subscriptions/listen`` stream) ends by then.
    expires_at: float | None = None
    #: The Django session a ``session`` caller signed in with (its key, a secret: never
    #: shown or stored, kept only for what outlives the request): a listen stream asks
    #: again whether that session still signs the user in (:mod:`.revocation`).
    session_key: str | None = field(default=None, repr=False, compare=False)

    @property
    def is_authenticated(self) -> bool:
        """Whether a user signed in (Django's meaning)."""
        return bool(getattr(self.user, "is_authenticated", False))

    @property
    def has_credentials(self) -> bool:
        """Whether a valid credential vouches for the caller: a signed-in user, or a token
        acting for no user (``client_credentials``: the client acts for itself) that is
        limited by scopes. Such a token may do what its scopes allow; refusing it with a
        401 sent its client to sign in again for a scope it already had. A credential
        with no user and no scope limit (a DRF class's) vouches for nobody: with scopes
        None it would pass every scope check."""
        return self.is_authenticated or (self.credential is not None and self.scopes is not None)

    @property
    def principal(self) -> str:
        """The key state is bound to: ``user:<pk>`` for a signed-in user, ``client:<id>``
        for a token acting for no user (``credential:<id>`` when its client is not known),
        else ``anonymous``."""
        if self.is_authenticated:
            return f"user:{self.user.pk}"
        if not self.has_credentials:
            return "anonymous"
        if self.client is not None:
            return f"client:{_storable(self.client)}"
        return f"credential:{_storable(self.credential or '')}"

    def has_scopes(self, required: Iterable[str]) -> bool:
        """Whether the credential grants every scope in ``required`` (always, when the
        credential is not scope-limited), counting the narrower scopes its scopes imply
        (``SCOPE_HIERARCHY``): a token granted ``books:admin`` where that implies
        ``books:write`` may do what ``books:write`` allows."""
        if self.scopes is None:
            return True
        needed = set(required)
        if needed <= self.scopes:
            return True
        implied = mcp_settings.implied_scopes
        granted = set(self.scopes)
        for scope in self.scopes:
            granted |= implied.get(scope, frozenset())
        return needed <= granted

    def lacks(self, required: Iterable[str]) -> frozenset[str]:
        """Every scope of ``required`` when this caller may not act with them, so that one
        challenge names them all; empty when nothing is required or the caller may go on.
        A scope-limited act needs an authenticated caller whose credential grants every
        scope (basic/authorization.mdx, "Scope Challenge Handling"), a user's or a
        client's."""
        needed = frozenset(required)
        if not needed or (self.has_credentials and self.has_scopes(needed)):
            return frozenset()
        return needed


def _storable(identity: str) -> str:
    """``identity`` as a principal may hold it: tasks keep the principal in a 255-character
    column, and a client id or token id is the token issuer's text. One that is long or
    holds what no database keeps (NUL, a surrogate) becomes its SHA-256 digest."""
    if len(identity) <= 200 and identity.isprintable() and identity.isascii():
        return identity
    digest = hashlib.sha256(identity.encode("utf-8", "surrogatepass")).hexdigest()
    return f"sha256:{digest}"
