"""Suite-wide fixtures: schema validation of every MCP response, a fresh site per test, a
request log that never writes behind a test's back, and one that is off (``no_request_log``).

Every response the Django test client receives from an MCP endpoint (any URL served by an
``MCPView``) is checked by :func:`tests.helpers.validate_mcp_response` against the official
2026-07-28 JSON Schema; a test can read what was exchanged through the ``mcp_log`` fixture.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest
from django.test import Client
from django.urls import path

from django_mcp import sites
from django_mcp.http.exchange import exchange_of
from django_mcp.requestlog import recorder
from django_mcp.sites import MCPSite

# The django_mcp pytest plugin's fixtures (mcp_client, async_mcp_client, mcp_endpoint). Where
# the package is installed with its pytest11 entry point these same fixtures come from the
# plugin too; defining them here as well is harmless and works from a plain checkout.
from django_mcp.test.pytest_plugin import (  # noqa: F401
    async_mcp_client,
    mcp_client,
    mcp_endpoint,
)
from testproject.books.models import Author, Book
from tests import urls as test_urls
from tests.helpers import ExchangeLog, RequestInfo, validate_mcp_response

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from django.http import HttpResponse


@pytest.fixture(autouse=True)
def _foreground_request_log(settings: Any) -> Iterator[None]:
    """No recorder thread: records reach the database only when a test flushes them, and
    whatever a test buffered is forgotten after it (nothing is written at interpreter exit)."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_LOG_BACKGROUND": False}
    yield
    recorder.stop()
    recorder.discard()


#: An instant 15 s into a minute, 30 min into an hour and 12 h into a day: no window of
#: the rate limiter ("/s" multiples up to "/30s", "/m", "/h", "/d") ends during a test.
RATE_WINDOW_INSTANT = 20_000 * 86_400 + 12 * 3_600 + 30 * 60 + 15


@pytest.fixture(autouse=True)
def _pinned_rate_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rate limiter's clock stands still: a test that makes N requests under an "N/m"
    limit would otherwise straddle a minute boundary now and then and find its counter
    reset (a CI run failed this way). Tests of the window itself pass their own clock."""
    monkeypatch.setattr("django_mcp.http.ratelimit.wall_clock", lambda: RATE_WINDOW_INSTANT)


@pytest.fixture
def no_request_log(settings: Any) -> None:
    """The request log off, for tests that count queries or use no database; a module asks
    for it with ``pytest.mark.usefixtures("no_request_log")``."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "REQUEST_LOG": "off"}


@pytest.fixture
def mcp_log() -> ExchangeLog:
    """The MCP exchanges of the current test, each already schema-validated."""
    return ExchangeLog()


@pytest.fixture
def validate_exchange(mcp_log: ExchangeLog) -> Callable[[HttpResponse, RequestInfo], None]:
    """How one response of an MCP endpoint is checked: against the schema, then logged in
    ``mcp_log``. ``tests/streams/conftest.py`` overrides it to read SSE responses too."""

    def validate(response: HttpResponse, info: RequestInfo) -> None:
        mcp_log.exchanges.append(validate_mcp_response(response, info))

    return validate


@pytest.fixture(autouse=True)
def _validate_mcp_responses(
    monkeypatch: pytest.MonkeyPatch, validate_exchange: Callable[[HttpResponse, RequestInfo], None]
) -> None:
    original = Client.generic

    def generic(self: Client, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        response = original(self, method, path, *args, **kwargs)
        request = getattr(response, "wsgi_request", None)
        if request is not None and exchange_of(request) is not None:
            data = args[0] if args else kwargs.get("data", "")
            validate_exchange(response, RequestInfo.from_body(method.upper(), data))
        return response

    monkeypatch.setattr(Client, "generic", generic)


@pytest.fixture
def mcp_site(settings: Any) -> Iterator[MCPSite]:
    """A fresh, empty ``MCPSite`` served at ``/mcp`` (the default site is not touched)."""
    site = MCPSite(name="test")
    test_urls.urlpatterns[:] = [path("mcp", site.urls)]
    settings.ROOT_URLCONF = "tests.urls"
    yield site
    test_urls.urlpatterns.clear()
    # A ModelTools with resource_uri watches its model's saves until it is unregistered:
    # left registered, it would announce later tests' rows.
    for model in list(site.registered_models()):
        site.unregister(model)
    # Gone for good: a task worker looks its site up by name among the live sites, and
    # this one may stay alive (in a reference cycle) until a collection, still named
    # "test", to serve a later test's task with its own tools.
    sites._all_sites.discard(site)


@pytest.fixture
def book(db: None) -> Book:
    """Dune by Frank Herbert (ISBN 9780441013593), the one book in the database."""
    author = Author.objects.create(name="Frank Herbert")
    return Book.objects.create(
        isbn="9780441013593", title="Dune", author=author, price=Decimal("9.99")
    )
