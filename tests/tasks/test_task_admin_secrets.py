"""No secret of the creating credential on a task, where the task admin shows it.

DRF's own ``TokenAuthentication`` returns an ``authtoken.Token`` whose primary key *is*
the token (``key = CharField(primary_key=True)``); the task's ``credential`` column held
``drf:<class>:<pk>``, so the admin's task page showed the bearer's secret to anyone who
may view tasks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import clear_url_caches, path

from django_mcp import Context
from django_mcp.tasks.models import MCPTask
from tests import urls as test_urls
from tests.helpers import call_tool, result_of
from tests.tasks.support import declaring

pytestmark = pytest.mark.django_db

SECRET = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"  # the shape of an authtoken key


@dataclass
class KeyedToken:
    """Like DRF's ``authtoken.Token``: its primary key is the secret."""

    pk: str
    key: str


class KeyAuthentication:
    """Like DRF's ``TokenAuthentication``: ``Authorization: Token <key>``."""

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if header != f"Token {SECRET}":
            return None
        return get_user_model().objects.get(username="bearer"), KeyedToken(SECRET, SECRET)

    def authenticate_header(self, request: Any) -> str:
        return "Token"


@pytest.fixture
def with_admin(mcp_site: Any) -> Iterator[Any]:
    """``mcp_site`` at /mcp and the admin at /admin/."""
    test_urls.urlpatterns.append(path("admin/", admin.site.urls))
    clear_url_caches()
    yield mcp_site
    clear_url_caches()


def test_the_task_admin_shows_no_token_the_task_was_created_with(
    client: Client, with_admin: Any, settings: Any, admin_client: Client
) -> None:
    pytest.importorskip("rest_framework")
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "AUTHENTICATORS": ["django_mcp.auth.drf.DRFAuthenticator"],
        "DRF_AUTHENTICATION_CLASSES": [KeyAuthentication],
    }
    get_user_model().objects.create_user("bearer")

    @with_admin.tool(task="required")
    def job(ctx: Context) -> str:
        return "done"

    headers = {"Authorization": f"Token {SECRET}"}
    created = result_of(call_tool(client, "job", {}, meta=declaring(), headers=headers))
    task = MCPTask.objects.get(pk=created["taskId"])
    assert SECRET not in task.credential
    page = admin_client.get(f"/admin/django_mcp/mcptask/{task.pk}/change/")
    assert page.status_code == 200
    assert SECRET not in page.content.decode()
