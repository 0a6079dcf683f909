"""The :class:`Caller`: who is asking, resolved once per request.

Everything that binds state to a caller (pagination cursors, ``requestState``, rate
limits, tasks) uses :attr:`Caller.principal`; everything that decides what a caller may
see uses :attr:`Caller.user` and :attr:`Caller.scopes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Caller:
    """The identity behind one request."""

    #: A Django user (``AnonymousUser`` when nobody signed in).
    user: Any
    #: The scopes the credential grants; None when the credential is not limited by scopes
    #: (a Django session, a DRF authentication without scopes).
    scopes: frozenset[str] | None = None
    #: A stable, non-secret id of the credential (``token:42``, an OAuth ``jti`` or client
    #: id): for rate limits and logs. Never the secret itself.
    credential: str | None = None
    #: How the caller was authenticated: "anonymous", "session", "drf", "token", "oauth",
    #: "environment" (stdio) ...
    method: str = "anonymous"

    @property
    def is_authenticated(self) -> bool:
        return bool(getattr(self.user, "is_authenticated", False))

    @property
    def principal(self) -> str:
        """The key state is bound to: ``user:<pk>`` for a signed-in user, else
        ``anonymous``."""
        if self.is_authenticated:
            return f"user:{self.user.pk}"
        return "anonymous"

    def has_scopes(self, required: Iterable[str]) -> bool:
        """Whether the credential grants every scope in ``required`` (always, when the
        credential is not scope-limited)."""
        return self.scopes is None or set(required) <= self.scopes

    def lacks(self, required: Iterable[str]) -> frozenset[str]:
        """Every scope of ``required`` when this caller may not act with them, so that one
        challenge names them all; empty when nothing is required or the caller may go on.
        A scope-limited act needs an authenticated caller whose credential grants every
        scope (basic/authorization.mdx, "Scope Challenge Handling")."""
        needed = frozenset(required)
        if not needed or (self.is_authenticated and self.has_scopes(needed)):
            return frozenset()
        return needed
