"""The explorer, the dashboard and the endpoint's browser page, through the test client."""

from __future__ import annotations

import html
import json
import math
import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import path
from django.utils import timezone

from django_mcp.explorer import stats
from django_mcp.requestlog import histogram, recorder
from tests import urls as test_urls
from tests.explorer.conftest import seed
from tests.helpers import mcp_post

pytestmark = pytest.mark.django_db

EXPLORER = "/admin/django_mcp/explorer/mcp/"
DASHBOARD = "/admin/django_mcp/dashboard/"


@pytest.fixture
def staff(client: Client) -> Client:
    get_user_model().objects.create_superuser("admin", "admin@example.com", "secret")
    client.login(username="admin", password="secret")
    return client


def test_the_admin_index_links_the_explorer_and_the_dashboard(staff: Client):
    page = staff.get("/admin/").content.decode()
    assert f'href="{EXPLORER}"' in page
    assert f'href="{DASHBOARD}"' in page


def test_the_explorer_lists_every_declaration_with_its_schema_and_who_may_use_it(staff: Client):
    response = staff.get(EXPLORER)
    assert response.status_code == 200
    page = response.content.decode()
    for key in ("search_books", "bookshop://about", "review_request", "set_price"):
        assert f'data-key="{key}"' in page
    assert "scope books:write" in page  # set_price's scopes_required
    assert "read_only_hint" in page or "readOnlyHint" in page
    assert "&quot;inputSchema&quot;" in page
    assert '"endpoint": "/mcp"' in page  # the config the script reads


def test_the_explorer_is_for_staff_only(client: Client):
    get_user_model().objects.create_user("plain", password="secret")
    client.login(username="plain", password="secret")
    response = client.get(EXPLORER)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_an_unknown_site_is_404(staff: Client):
    assert staff.get("/admin/django_mcp/explorer/nope/").status_code == 404


def test_the_dashboard_needs_the_request_log_view_permission(client: Client):
    get_user_model().objects.create_user("clerk", password="secret", is_staff=True)
    client.login(username="clerk", password="secret")
    assert client.get(DASHBOARD).status_code == 403
    assert DASHBOARD not in client.get("/admin/").content.decode()


def test_served_revisions_need_their_own_view_permission(client: Client):
    """The admin hides ServedRevision rows from a user without view_servedrevision; the
    dashboard must not show them to a holder of view_requestlog alone."""
    from django.contrib.auth.models import Permission

    seed(10)
    clerk = get_user_model().objects.create_user("clerk", password="secret", is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="view_requestlog"))
    client.login(username="clerk", password="secret")
    page = client.get(DASHBOARD).content.decode()
    assert "future-client" not in page
    assert "Revisions served best-effort" not in page
    clerk.user_permissions.add(Permission.objects.get(codename="view_servedrevision"))
    assert "future-client" in client.get(DASHBOARD).content.decode()


def test_the_dashboard_draws_the_window_it_is_asked_for(staff: Client):
    seed(300)
    page = staff.get(DASHBOARD, {"window": "24h"}).content.decode()
    assert '<strong id="mcp-total">300</strong>' in page
    assert page.count('class="mcp-chart"') == 4
    assert "No requests in this window" not in page
    assert "future-client" in page  # best-effort revisions by client
    # An unknown window falls back to the default rather than failing.
    assert staff.get(DASHBOARD, {"window": "forever"}).status_code == 200


def test_the_dashboard_without_time_zones_labels_the_wall_clock_the_log_holds(
    staff: Client, settings: Any
):
    """``USE_TZ = False``: the summaries hold naive wall-clock hours and days of
    ``TIME_ZONE``. ``localtime`` refuses a naive time (the 24-hour page was a 500), and
    ``astimezone`` read one as the process's local time: east of UTC every day was
    labelled the day before."""
    settings.USE_TZ = False
    settings.TIME_ZONE = "Asia/Tokyo"
    seed(20)
    now = timezone.now()  # naive, in Tokyo
    hourly = staff.get(DASHBOARD, {"window": "24h"})
    assert hourly.status_code == 200
    assert f">{now:%H}:00</text>" in hourly.content.decode()
    daily = staff.get(DASHBOARD, {"window": "7d"}).content.decode()
    assert f">{now:%m-%d}</text>" in daily


def test_p95_per_target_is_within_the_histograms_bound_of_the_nearest_rank():
    rows = seed(300)
    durations = sorted(r.duration_ms for r in rows if r.target == "get_book")
    found = {
        s.target: s for s in stats.per_target(stats.in_window(timezone.now() - timedelta(days=1)))
    }
    got = found["get_book"].p95_ms
    assert found["get_book"].calls == len(durations)
    assert found["get_book"].avg_ms == pytest.approx(sum(durations) / len(durations))
    exact = durations[math.ceil(0.95 * len(durations)) - 1]
    assert got is not None
    assert exact / histogram.ERROR_FACTOR <= got <= exact * histogram.ERROR_FACTOR


def test_error_rates_count_only_errors():
    seed(300)
    found = {
        s.target: s for s in stats.per_target(stats.in_window(timezone.now() - timedelta(days=1)))
    }
    assert found["search_books"].errors == 0
    assert 0 < found["set_price"].errors < found["set_price"].calls


def test_a_browser_get_on_the_endpoint_gets_a_page_naming_it(staff: Client):
    """basic/transports/streamable-http.mdx: the endpoint serves no GET stream; a browser
    asking for HTML gets a page instead of a bare 405."""
    response = staff.get("/mcp", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert response.status_code == 200
    page = response.content.decode()
    assert "2026-07-28" in page
    assert "http://testserver/mcp" in page
    assert f'href="{EXPLORER}"' in page


def test_a_browser_page_whatever_the_case_of_its_media_type(client: Client):
    """RFC 9110 8.3.1: media type names are case-insensitive."""
    response = client.get("/mcp", HTTP_ACCEPT="TEXT/HTML,*/*;q=0.8")
    assert response.status_code == 200


def test_the_browser_page_links_the_explorer_for_staff_only(client: Client):
    response = client.get("/mcp", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert "mcp-explorer-link" not in response.content.decode()


@pytest.mark.parametrize(
    "accept",
    [
        None,
        "application/json, text/event-stream",
        "*/*",
        "text/event-stream, text/html",  # a GET stream asked for first
        "application/json, text/html",  # JSON preferred
        "text/html;q=0.5, application/json",
        "text/html;q=0, */*;q=0.1",  # HTML refused outright
    ],
)
def test_clients_still_get_405_on_get(client: Client, accept: Any):
    """basic/transports/streamable-http.mdx: a server without a GET stream answers 405."""
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    response = client.get("/mcp", **headers)
    assert response.status_code == 405
    assert response["Allow"] == "POST"


def test_the_browser_page_is_not_an_mcp_exchange_in_the_log(client: Client):
    client.get("/mcp", HTTP_ACCEPT="text/html")
    client.get("/mcp")
    assert recorder.flush() == 1  # only the 405 is recorded


@pytest.fixture
def slashed_site():
    """A live site whose name holds a slash: nothing in MCPSite refuses one, and it serves
    fine at its own URL (``path("partners/mcp", site.urls)``)."""
    from django_mcp import sites

    site = sites.MCPSite(name="partners/v2")
    yield site
    sites._all_sites.discard(site)


def test_a_site_name_with_a_slash_has_an_explorer_and_breaks_no_admin_page(
    staff: Client, slashed_site: Any
):
    # Every admin page lists the explorer of each site (the index, and the nav sidebar).
    for page in ("/admin/", "/admin/auth/user/", "/admin/django_mcp/requestlog/"):
        assert staff.get(page).status_code == 200, page
    response = staff.get("/admin/django_mcp/explorer/partners/v2/")
    assert response.status_code == 200
    assert "partners/v2" in response.content.decode()
    # The other explorer pages still resolve as before.
    assert staff.get(EXPLORER).status_code == 200
    assert staff.get(DASHBOARD).status_code == 200
    assert staff.get("/admin/django_mcp/explorer/partners/").status_code == 404


def test_a_non_finite_default_is_shown_as_the_endpoint_lists_it(staff: Client, mcp_site: Any):
    """``math.inf`` as a default: tools/list serves ``null`` (strict JSON); the page used to
    hold ``Infinity``, which its ``JSON.parse`` refuses, breaking every later entry."""
    test_urls.urlpatterns.append(path("admin/", admin.site.urls))

    @mcp_site.tool
    def unbounded(limit: float = math.inf, floor: float = -math.inf) -> str:
        """A tool with unbounded defaults."""
        return "ok"

    listed = json.loads(mcp_post(staff, "tools/list").content)["result"]["tools"][0]
    assert listed["inputSchema"]["properties"]["limit"]["default"] is None
    page = staff.get("/admin/django_mcp/explorer/test/").content.decode()
    shown = re.search(r'<pre class="mcp-json">(.*?)</pre>', page, re.S)
    assert shown is not None
    assert json.loads(html.unescape(shown.group(1)), parse_constant=_refuse) == listed


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def test_the_endpoints_negotiated_answer_varies_on_accept(staff: Client):
    """A GET on the endpoint is the page or a 405 depending on Accept alone, so a cache must
    key it on Accept (RFC 9110 12.5.5): else Django's cache middleware, or a CDN, would
    serve the cached page to MCP clients."""
    page = staff.get("/mcp", HTTP_ACCEPT="text/html")
    refused = staff.get("/mcp", HTTP_ACCEPT="application/json, text/event-stream")
    assert (page.status_code, refused.status_code) == (200, 405)
    for response in (page, refused):
        vary = {v.strip().lower() for v in response.get("Vary", "").split(",")}
        assert "accept" in vary, response.get("Vary")
    # The page reads the session (the explorer link is for staff): it varies on it too.
    assert "cookie" in {v.strip().lower() for v in page["Vary"].split(",")}
