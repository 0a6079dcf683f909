"""Authentication under ASGI: a token is checked in a thread (Django forbids queries on the
event loop), a request without credentials stays on the loop."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import TYPE_CHECKING, Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient

from tests.auth.conftest import bearer
from tests.helpers import admission_threads, mcp_body, mcp_headers

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def open_site(mcp_site: Any) -> Any:
    """A site with no permission gate: only credentials can make admission need a thread."""

    @mcp_site.tool(scopes_required="x:write")
    def write() -> str:
        return "written"

    return mcp_site


def call(headers: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int, list[int]]:
    seen = admission_threads(monkeypatch)
    body = mcp_body("tools/call", {"name": "write", "arguments": {}})
    client = AsyncClient()

    async def run() -> tuple[Any, int]:
        response = await client.post(
            "/mcp",
            json.dumps(body),
            content_type="application/json",
            headers={**mcp_headers(body), **headers},
        )
        # The test client keeps Django from closing connections at the end of a request;
        # close the one the authentication thread opened, or the test database stays busy.
        await sync_to_async(connections.close_all)()
        return response, threading.get_ident()

    response, loop_thread = asyncio.run(run())
    return response, loop_thread, seen


def test_a_token_is_checked_off_the_event_loop(
    open_site: Any, issue: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    response, loop_thread, seen = call(bearer(issue("x:write")), monkeypatch)
    assert response.status_code == 200, response.content
    assert response.json()["result"]["content"][0]["text"] == "written"
    assert len(seen) == 1
    assert seen[0] != loop_thread


def test_no_credentials_stay_on_the_loop_and_get_the_challenge(
    open_site: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    response, loop_thread, seen = call({}, monkeypatch)
    assert response.status_code == 401
    assert 'scope="x:write"' in response["WWW-Authenticate"]
    assert seen == [loop_thread]
