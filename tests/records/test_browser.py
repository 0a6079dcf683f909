"""A real browser sees the request log and the best-effort revisions in the admin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from django_mcp.requestlog import recorder
from tests.records.support import FUTURE_REVISION, best_effort_call, search

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM}")
@pytest.mark.usefixtures("transactional_db")
def test_an_admin_sees_logged_calls_and_best_effort_revisions_in_a_browser(live_server: Any):
    # All ORM work happens before Playwright starts: its sync API runs an event loop in
    # this thread, and Django refuses synchronous database access while one is running.
    get_user_model().objects.create_superuser("admin", "admin@example.com", "secret")
    mcp = Client()
    search(mcp)
    best_effort_call(mcp)
    assert recorder.flush() == 2

    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{live_server.url}/admin/login/?next=/admin/")
            page.fill("#id_username", "admin")
            page.fill("#id_password", "secret")
            page.click("input[type=submit]")
            page.wait_for_url(f"{live_server.url}/admin/")

            page.goto(f"{live_server.url}/admin/django_mcp/requestlog/")
            rows = page.locator("#result_list tbody tr")
            sync_api.expect(rows).to_have_count(2)
            sync_api.expect(rows.filter(has_text="search_books")).to_have_count(1)
            sync_api.expect(page.locator(".object-tools .addlink")).to_have_count(0)

            page.goto(f"{live_server.url}/admin/django_mcp/servedrevision/")
            served = page.locator("#result_list tbody tr")
            sync_api.expect(served).to_have_count(1)
            sync_api.expect(served).to_contain_text(FUTURE_REVISION)
            sync_api.expect(served).to_contain_text("future-client")
        finally:
            browser.close()
