"""The authenticator interface and the errors that become 401 and 403 answers.

An authenticator looks at one ``HttpRequest`` and returns a :class:`~.caller.Caller` when it
recognises credentials it is responsible for, None when the request carries none of its
kind (the next authenticator is tried), or raises :class:`AuthenticationFailed` when the
credentials are present but wrong (a bad token is a 401, never a silent fall back to
anonymous).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from django.http import HttpRequest

    from django_mcp.auth.caller import Caller


class AuthenticationFailed(Exception):
    """Credentials were presented and are invalid, expired or revoked: HTTP 401
    (``error="invalid_token"`` for bearer tokens, RFC 6750 section 3.1)."""

    def __init__(self, description: str, *, error: str = "invalid_token") -> None:
        super().__init__(description)
        self.description = description
        self.error = error


class InsufficientScope(Exception):
    """The credential is valid but lacks scopes this operation needs: HTTP 403 with
    ``error="insufficient_scope"`` naming every scope needed (RFC 6750 section 3.1)."""

    def __init__(self, scopes: frozenset[str], description: str = "") -> None:
        super().__init__(description or f"Needs scopes: {' '.join(sorted(scopes))}")
        self.scopes = scopes
        self.description = str(self)


class Authenticator:
    """Base class of the classes named in ``DJANGO_MCP["AUTHENTICATORS"]``."""

    #: Whether this authenticator may accept a request by its ``Authorization: Bearer``
    #: token. A request that presents a bearer token is authenticated by one that does, or
    #: refused (:func:`~django_mcp.auth.resolve.refuse_unclaimed_bearer`): a session cookie
    #: beside a token this server cannot validate does not get it served. True by default,
    #: so that an authenticator of your own that reads bearer tokens keeps working;
    #: ``SessionAuthenticator`` says False.
    accepts_bearer_tokens: ClassVar[bool] = True

    def authenticate(self, request: HttpRequest) -> Caller | None:
        """The caller behind ``request``'s credentials of this kind, None when there are
        none, or raise :class:`AuthenticationFailed`."""
        raise NotImplementedError

    def challenge(self, request: HttpRequest) -> str | None:
        """The ``WWW-Authenticate`` value to send with a 401, or None for no challenge."""
        return None

    def has_credentials(self, request: HttpRequest) -> bool:
        """Whether ``request`` may carry credentials of this kind, decided from headers
        and cookies alone (no database). When no authenticator says yes, the request is
        anonymous without calling :meth:`authenticate` (or refused, if it presents a
        bearer token), so under ASGI it needs no thread. The default, True, is always
        safe."""
        return True
