"""``AccessToken``: bearer tokens a site issues to its own users, kept as hashes.

A token is ``mcp_`` plus 43 characters of :func:`secrets.token_urlsafe` (256 random bits).
Only its SHA-256 digest is stored: with that much entropy a fast one-way hash cannot be
reversed or brute-forced, and a plain digest (unlike a hash keyed with ``SECRET_KEY``)
survives a key rotation. The plaintext exists once, when :meth:`AccessTokenManager.issue`
returns it; the admin and ``mcp_create_token`` show it then and never again. ``prefix``
(the first characters) lets people tell their tokens apart without storing the secret.
"""

from __future__ import annotations

import datetime
import hashlib
import secrets
from collections.abc import Iterable
from typing import Any, ClassVar, Final

from django.conf import settings
from django.db import models
from django.utils import timezone

TOKEN_PREFIX: Final = "mcp_"
SHOWN_PREFIX_LENGTH: Final = 12


def digest(token: str) -> str:
    """The stored form of ``token``: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh token: the prefix and 256 random bits, URL-safe."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def parse_scopes(value: str | Iterable[str] | None) -> list[str]:
    """Scopes from a space-separated string or an iterable, deduplicated and sorted."""
    if value is None:
        return []
    items = value.split() if isinstance(value, str) else [s for v in value for s in v.split()]
    return sorted(set(items))


def expiry_out_of_range(when: datetime.datetime | None) -> bool:
    """Whether ``when`` falls outside years 1 to 9999 once in UTC, where the database keeps
    it: "never expires" typed as 9999-12-31 west of UTC is year 10000 there. SQLite
    overflows on it; PostgreSQL stores it and then cannot read it back, so every list of
    tokens fails from then on. A naive value is taken as is (Django makes it aware in the
    current time zone, which the same check would need; callers pass aware ones)."""
    if when is None or when.tzinfo is None:
        return False
    try:
        when.astimezone(datetime.UTC)
    except OverflowError:
        return True
    return False


#: Why :func:`expiry_out_of_range` refuses a value (the admin's form and the command).
EXPIRY_OUT_OF_RANGE: Final = (
    "This time is out of the range a database can store in UTC (years 1 to 9999)"
)


class AccessTokenManager(models.Manager["AccessToken"]):
    def issue(
        self,
        user: Any,
        *,
        name: str = "",
        scopes: str | Iterable[str] | None = None,
        expires_at: datetime.datetime | None = None,
    ) -> tuple[AccessToken, str]:
        """Create a token for ``user``; returns the row and the plaintext, shown once.
        An ``expires_at`` the database cannot keep is a ``ValueError``
        (:func:`expiry_out_of_range`), not a row that breaks the token list."""
        if expiry_out_of_range(expires_at):
            raise ValueError(f"expires_at {expires_at}: {EXPIRY_OUT_OF_RANGE}")
        token = AccessToken(user=user, name=name, scopes=" ".join(parse_scopes(scopes)))
        token.expires_at = expires_at
        plaintext = token.set_secret()
        token.save()
        return token, plaintext


class AccessToken(models.Model):
    """A bearer token for the MCP endpoint, scoped to a user and optionally to scopes."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_access_tokens"
    )
    name = models.CharField(max_length=100, blank=True, help_text="What the token is for.")
    prefix = models.CharField(max_length=SHOWN_PREFIX_LENGTH, editable=False)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    scopes = models.CharField(
        max_length=1000,
        blank=True,
        help_text="Space-separated scopes, e.g. 'books:read books:write'; "
        "empty: the token carries no scope.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects: ClassVar[AccessTokenManager] = AccessTokenManager()

    class Meta:
        app_label = "django_mcp"
        verbose_name = "MCP access token"
        ordering: ClassVar[list[str]] = ["-created_at"]
        # A token acts as its user: issuing one for someone else is acting as them, which
        # "add access token" alone must not allow (the admin issues one for oneself).
        permissions = (
            ("issue_accesstoken_for_others", "Can issue MCP access tokens for other users"),
        )

    def __str__(self) -> str:
        return f"{self.name or 'token'} ({self.prefix}…)"

    def set_secret(self) -> str:
        """Give the token a new secret; returns the plaintext (store only the digest)."""
        plaintext = new_token()
        self.prefix = plaintext[:SHOWN_PREFIX_LENGTH]
        self.digest = digest(plaintext)
        return plaintext

    @property
    def scope_set(self) -> frozenset[str]:
        return frozenset(self.scopes.split())

    def is_usable(self, now: datetime.datetime | None = None) -> bool:
        """Neither revoked nor expired."""
        now = now or timezone.now()
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > now

    def revoke(self) -> None:
        """Revoke the token now (idempotent)."""
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])
