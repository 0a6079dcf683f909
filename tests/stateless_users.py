"""A user an authentication class builds from its token, as simplejwt's stateless
``TokenUser`` is built: shared by the tests of what must not swap it for the database row
that shares its pk (a listen stream's recheck, a task's runs)."""

from __future__ import annotations

from typing import Any


class StatelessUser:
    """A user an authentication class builds from its token, not from the database, as
    ``rest_framework_simplejwt``'s ``JWTStatelessUserAuthentication`` builds ``TokenUser``:
    it carries the database user's pk, and no Django permission of its own."""

    is_authenticated = True
    is_active = True
    is_anonymous = False

    def __init__(self, pk: int) -> None:
        self.pk = self.id = pk

    def get_username(self) -> str:
        return f"token-user-{self.pk}"

    def has_perm(self, perm: str, obj: Any = None) -> bool:
        return False

    def has_perms(self, perms: Any, obj: Any = None) -> bool:
        return False


class StatelessAuthentication:
    """A DRF authentication class of the project's: ``Bearer stateless-<pk>``."""

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header.startswith("Bearer stateless-"):
            return None
        return StatelessUser(int(header.removeprefix("Bearer stateless-"))), None

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"


def stateless_settings(settings: Any) -> None:
    """Authenticate through DRF with :class:`StatelessAuthentication` only."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "AUTHENTICATORS": ["django_mcp.auth.drf.DRFAuthenticator"],
        "DRF_AUTHENTICATION_CLASSES": [StatelessAuthentication],
    }


def stateless_bearer(pk: int) -> dict[str, str]:
    """The headers of a request signed in as :class:`StatelessUser` ``pk``."""
    return {"Authorization": f"Bearer stateless-{pk}"}
