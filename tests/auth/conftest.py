"""A fresh site with one tool of each kind of gate, its metadata URLs, and token helpers."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from django_mcp import Context
from django_mcp.auth.models import AccessToken
from django_mcp.http.auth import protected_resource_urls
from tests import urls as test_urls

if TYPE_CHECKING:
    from collections.abc import Callable

    from django_mcp.sites import MCPSite


@pytest.fixture
def auth_site(mcp_site: MCPSite) -> MCPSite:
    @mcp_site.tool
    def whoami(ctx: Context) -> str:
        """Open to all: says who is calling."""
        scopes = "-" if ctx.scopes is None else " ".join(sorted(ctx.scopes))
        return f"{ctx.caller.method} {ctx.principal} {scopes}"

    @mcp_site.tool(scopes_required=["books:write", "books:read"])
    def write() -> str:
        """Needs two scopes."""
        return "written"

    @mcp_site.tool(permission_required="books.change_book")
    def gated() -> str:
        """Needs a Django permission."""
        return "gated"

    @mcp_site.prompt(scopes_required="prompts:use", complete={"topic": lambda value: [value]})
    def scoped_prompt(topic: str) -> str:
        """A prompt behind a scope."""
        return f"about {topic}"

    test_urls.urlpatterns.extend(protected_resource_urls("mcp", mcp_site))
    return mcp_site


@pytest.fixture
def user(db: Any) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user("reader", password="pw")


@pytest.fixture
def editor(user: Any) -> Any:
    user.user_permissions.add(Permission.objects.get(codename="change_book"))
    return user


@pytest.fixture
def issue(user: Any) -> Callable[..., str]:
    def make(scopes: str = "", *, expires_in: float | None = None, owner: Any = None) -> str:
        expires = (
            None if expires_in is None else timezone.now() + datetime.timedelta(seconds=expires_in)
        )
        _, plaintext = AccessToken.objects.issue(owner or user, scopes=scopes, expires_at=expires)
        return plaintext

    return make


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
