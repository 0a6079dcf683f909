"""The explorer, the dashboard, the endpoint's browser page and the request-log list in a
real browser (headless Chromium): no console errors, calls through the explorer's forms
reach the endpoint as the signed-in user, and the dashboard's charts draw.

Screenshots go to ``$DJANGO_MCP_SCREENSHOTS`` (default: a temporary directory); the copies
in ``docs/img/`` are refreshed from there by hand.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import path

from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.sites import MCPSite
from tests import urls as test_urls
from tests.explorer.conftest import seed

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM}"),
    pytest.mark.usefixtures("transactional_db"),
]


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    target = Path(os.environ.get("DJANGO_MCP_SCREENSHOTS") or tmp_path / "screenshots")
    target.mkdir(parents=True, exist_ok=True)
    return target


@contextmanager
def signed_in(live_server: Any) -> Iterator[tuple[Any, Any, list[str]]]:
    """A signed-in superuser's page, Playwright's module, and the console errors collected.

    All ORM work happens before or after: Playwright's sync API runs an event loop in this
    thread, and Django refuses synchronous database access while one is running.
    """
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 900})
            # The test project has no favicon; its 404 is not the pages' fault.
            tab.route("**/favicon.ico", lambda route: route.fulfill(status=204))
            errors: list[str] = []
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.goto(f"{live_server.url}/admin/login/?next=/admin/")
            tab.fill("#id_username", "admin")
            tab.fill("#id_password", "secret")
            tab.click("input[type=submit]")
            tab.wait_for_url(f"{live_server.url}/admin/")
            yield tab, sync_api, errors
        finally:
            browser.close()


def test_a_tool_call_and_an_input_request_through_the_explorer(live_server: Any, shots: Path):
    get_user_model().objects.create_superuser("admin", "admin@example.com", "secret")
    with signed_in(live_server) as (tab, sync_api, errors):
        run_the_explorer(live_server, tab, sync_api.expect, shots)
        assert errors == []
    # Every call went through the real endpoint, authenticated by the session.
    assert recorder.flush() >= 6
    logged = RequestLog.objects.filter(client_name="django-mcp-explorer")
    assert set(logged.values_list("username", flat=True)) == {"admin"}
    assert logged.filter(target="test_input_required_result_request_state").count() == 2


def run_the_explorer(live_server: Any, tab: Any, expect: Any, shots: Path) -> None:
    tab.click("text=MCP explorer (mcp)")
    tab.wait_for_url(f"{live_server.url}/admin/django_mcp/explorer/mcp/")

    tool = tab.locator('details[data-key="whoami"]')
    tool.locator("summary").click()
    tool.locator("input[type=submit]").click()
    result = tool.locator(".mcp-result")
    expect(result).to_contain_text("You are django-mcp-explorer, speaking MCP 2026-07-28.")

    search = tab.locator('details[data-key="search_books"]')
    search.locator("summary").click()
    search.locator("input[name=query]").fill("django")
    search.locator("input[type=submit]").click()
    expect(search.locator(".mcp-result")).to_contain_text('"structuredContent"')

    # An x-mcp-header argument is mirrored in Mcp-Param-Region, non-ASCII as base64
    # (basic/transports/streamable-http.mdx): a missing or wrong header would be a 400.
    mirrored = tab.locator('details[data-key="test_header_param"]')
    mirrored.locator("summary").click()
    mirrored.locator("input[name=region]").fill("Zürich")
    mirrored.locator("input[type=submit]").click()
    expect(mirrored.locator(".mcp-result")).to_contain_text("Region: Zürich")

    asking = tab.locator('details[data-key="test_input_required_result_request_state"]')
    asking.locator("summary").click()
    asking.locator(".mcp-form input[type=submit]").click()
    question = asking.locator(".mcp-input-request")
    expect(question).to_contain_text("Confirm to continue.")
    expect(asking.locator(".mcp-result")).to_contain_text("input_required")
    question.locator("input[name=ok]").check()
    tab.screenshot(path=str(shots / "explorer.png"), full_page=False)
    question.locator("input[type=submit]").click()
    expect(asking.locator(".mcp-result")).to_contain_text("state-ok")

    about = tab.locator('details[data-key="bookshop://about"]')
    about.locator("summary").click()
    about.locator("input[type=submit]").click()
    expect(about.locator(".mcp-result")).to_contain_text('"contents"')

    prompt = tab.locator('details[data-key="test_prompt_with_arguments"]')
    prompt.locator("summary").click()
    prompt.locator("input[name=arg1]").fill("uno")
    prompt.locator("input[name=arg2]").fill("dos")
    prompt.locator("input[type=submit]").click()
    expect(prompt.locator(".mcp-result")).to_contain_text("arg1='uno', arg2='dos'")


def test_the_dashboard_draws_its_charts_and_the_log_lists_the_calls(live_server: Any, shots: Path):
    seed(400)
    assert recorder.flush() == 0
    get_user_model().objects.create_superuser("admin", "admin@example.com", "secret")
    with signed_in(live_server) as (tab, sync_api, errors):
        tab.click("text=MCP dashboard")
        charts = tab.locator("svg.mcp-chart")
        sync_api.expect(charts).to_have_count(4)
        sync_api.expect(tab.locator("#mcp-total")).to_have_text("400")
        assert tab.locator("svg.mcp-chart rect.bar").count() > 20
        assert charts.first.bounding_box()["height"] > 100
        tab.screenshot(path=str(shots / "dashboard.png"), full_page=True)

        tab.goto(f"{live_server.url}/admin/django_mcp/requestlog/")
        sync_api.expect(tab.locator("#result_list tbody tr")).to_have_count(100)
        tab.screenshot(path=str(shots / "requestlog.png"))

        tab.goto(f"{live_server.url}/mcp")
        sync_api.expect(tab.locator("#mcp-revision")).to_have_text("2026-07-28")
        sync_api.expect(tab.locator("#mcp-explorer-link")).to_be_visible()
        tab.screenshot(path=str(shots / "endpoint.png"))
        assert errors == []


@pytest.fixture
def explored_site(mcp_site: MCPSite) -> MCPSite:
    """The ``mcp_site`` at /mcp (the site "test"), with the admin in the same URLconf."""
    test_urls.urlpatterns.append(path("admin/", admin.site.urls))
    return mcp_site


def call_from_the_explorer(live_server: Any, key: str, fill: dict[str, str]) -> tuple[str, list]:
    """Open the explorer of the site "test", set the select/inputs named in ``fill`` on the
    entry ``key`` (leaving the others alone), submit it, and give the result's text."""
    if not get_user_model().objects.filter(username="admin").exists():
        get_user_model().objects.create_superuser("admin", "admin@example.com", "secret")
    with signed_in(live_server) as (tab, sync_api, errors):
        tab.goto(f"{live_server.url}/admin/django_mcp/explorer/test/")
        entry = tab.locator(f'details[data-key="{key}"]')
        entry.locator("summary").click()
        for name, value in fill.items():
            widget = entry.locator(f"[name={name}]")
            if widget.evaluate("node => node.tagName") == "SELECT":
                widget.select_option(value)
            else:
                widget.fill(value)
        entry.locator("input[type=submit]").click()
        result = entry.locator(".mcp-result")
        sync_api.expect(result).to_contain_text("HTTP 200")
        sync_api.expect(result).to_contain_text('"content"')
        return result.text_content() or "", errors


def test_optional_arguments_left_alone_are_not_sent(live_server: Any, explored_site: MCPSite):
    @explored_site.tool
    def greet(name: str, note: str | None = None, times: int = 2, loud: bool = False) -> str:
        """Greets."""
        return f"name={name!r} note={note!r} times={times!r} loud={loud!r}"

    # Not the four-letter string "null" for note: the tool's own defaults apply.
    text, errors = call_from_the_explorer(live_server, "greet", {"name": "ada"})
    assert "name='ada' note=None times=2 loud=False" in text, text
    assert errors == []


def test_a_nullable_boolean_can_be_left_unset(live_server: Any, explored_site: MCPSite):
    @explored_site.tool
    def toggle(flag: bool | None = None) -> str:
        """None means: leave it as it is."""
        return f"flag={flag!r}"

    text, errors = call_from_the_explorer(live_server, "toggle", {})
    assert "flag=None" in text, text
    text, errors = call_from_the_explorer(live_server, "toggle", {"flag": "false"})
    assert "flag=False" in text, text
    assert errors == []


def test_a_non_finite_default_breaks_no_form(live_server: Any, explored_site: MCPSite):
    import math

    @explored_site.tool
    def a_unbounded(limit: float = math.inf) -> str:
        """A tool with an unbounded default, listed first."""
        return "ok"

    @explored_site.tool
    def b_plain(name: str) -> str:
        """An ordinary tool, listed after it."""
        return f"hello {name}"

    text, errors = call_from_the_explorer(live_server, "b_plain", {"name": "ada"})
    assert "hello ada" in text
    assert errors == []


def test_an_argument_named_like_an_object_builtin_is_sent(live_server: Any, explored_site: MCPSite):
    # Only a hand-written schema can name one "__proto__" (Python arguments may not start
    # with "_"); requiring it makes the server refuse a call that lacks it.
    schema = {
        "type": "object",
        "properties": {"__proto__": {"type": "string"}, "constructor": {"type": "string"}},
        "required": ["__proto__", "constructor"],
    }

    @explored_site.tool(input_schema=schema)
    def odd(constructor: str) -> str:
        """Arguments whose names a plain JavaScript object treats specially."""
        return f"constructor={constructor!r}"

    # out["__proto__"] = value on a {} sets its prototype: the argument would vanish.
    text, errors = call_from_the_explorer(
        live_server, "odd", {"__proto__": "p", "constructor": "c"}
    )
    assert "constructor='c'" in text, text
    assert '"isError": true' not in text, text
    assert errors == []


def widgets_of(live_server: Any, key: str) -> dict[str, str]:
    """Each input of the explorer's form for ``key``: its name and what it is ("input:number",
    "select", "textarea"...), as the page's script built it from the definition."""
    if not get_user_model().objects.filter(username="admin").exists():
        get_user_model().objects.create_superuser("admin", "admin@example.com", "secret")
    with signed_in(live_server) as (tab, _, errors):
        tab.goto(f"{live_server.url}/admin/django_mcp/explorer/test/")
        found: dict[str, str] = tab.locator(f'details[data-key="{key}"] .mcp-fields').evaluate(
            """box => Object.fromEntries(Array.from(box.querySelectorAll("[name]")).map(
                node => [node.name, node.tagName.toLowerCase() +
                    (node.tagName === "INPUT" ? ":" + node.type : "")]))"""
        )
        assert errors == []
        return found


def test_refs_render_the_definition_they_point_to(live_server: Any, explored_site: MCPSite):
    """A ``$ref`` renders the ``$defs`` entry it names (JSON Schema 2020-12, as the server
    validates it): an own entry only, whatever its name (``__proto__``, ``constructor``,
    ``hasOwnProperty``), through a ``$ref`` chain, and with the JSON Pointer escapes
    (``~0``, ``~1``, RFC 6901) and URI fragment percent-encoding (RFC 3986) decoded."""
    schema = {
        "type": "object",
        "$defs": {
            "__proto__": {"type": "integer"},
            "constructor": {"type": "boolean"},
            "hasOwnProperty": {"enum": ["a", "b"]},
            "a/b~c": {"type": "number"},
            "with space": {"type": "string"},
            "alias": {"$ref": "#/$defs/__proto__"},
        },
        "properties": {
            "p": {"$ref": "#/$defs/__proto__"},
            "c": {"$ref": "#/$defs/constructor"},
            "h": {"$ref": "#/$defs/hasOwnProperty"},
            "escaped": {"$ref": "#/$defs/a~1b~0c"},
            "encoded": {"$ref": "#/$defs/with%20space"},
            "chained": {"$ref": "#/$defs/alias"},
        },
        "required": ["p", "c", "h", "escaped", "encoded", "chained"],
    }

    @explored_site.tool(input_schema=schema)
    def typed(c: bool, h: str, escaped: float, encoded: str, chained: int) -> str:
        """Arguments whose schemas all sit behind a $ref."""
        return f"c={c!r} h={h!r} escaped={escaped!r} encoded={encoded!r} chained={chained!r}"

    assert widgets_of(live_server, "typed") == {
        "p": "input:number",
        "c": "input:checkbox",
        "h": "select",
        "escaped": "input:number",
        "encoded": "input:text",
        "chained": "input:number",
    }
    # The server's validator reads the refs alike: a call with the typed values passes it.
    fill = {"p": "7", "h": '"b"', "escaped": "1.5", "encoded": "x", "chained": "3"}
    text, errors = call_from_the_explorer(live_server, "typed", fill)
    assert "c=False h='b' escaped=1.5 encoded='x' chained=3" in text, text
    assert errors == []


def test_a_schema_keyword_named_proto_is_no_prototype(live_server: Any, explored_site: MCPSite):
    """JSON Schema ignores a keyword it does not know, "__proto__" too: the server accepts
    any value for these. Copying such a schema onto a {} (to follow a $ref or unwrap an
    Optional) made the keyword the copy's prototype, so the form inherited its "type"."""
    schema = {
        "type": "object",
        "$defs": {"Odd": {"__proto__": {"type": "integer"}}},
        "properties": {
            "referenced": {"$ref": "#/$defs/Odd"},
            "optional": {"anyOf": [{"__proto__": {"type": "integer"}}, {"type": "null"}]},
        },
    }

    @explored_site.tool(input_schema=schema)
    def anything(referenced: Any = None, optional: Any = None) -> str:
        """Arguments of any JSON type."""
        return f"referenced={referenced!r}"

    assert widgets_of(live_server, "anything") == {
        "referenced": "textarea",
        "optional": "textarea",
    }


def test_an_optional_keeps_the_description_and_default_of_its_inner_schema(
    live_server: Any, explored_site: MCPSite
):
    """Unwrapping an Optional (``anyOf`` with ``{"type": "null"}``) copied the outer
    schema's description and default over the inner one's even when the outer had none:
    the field lost its help text and its default value. The outer's win only when given."""
    schema = {
        "type": "object",
        "properties": {
            "inner": {
                "anyOf": [
                    {"type": "string", "description": "Said inside", "default": "hi"},
                    {"type": "null"},
                ]
            },
            "outer": {
                "anyOf": [{"type": "integer", "default": 1}, {"type": "null"}],
                "description": "Said outside",
                "default": 5,
            },
        },
    }

    @explored_site.tool(input_schema=schema)
    def noted(inner: Any = "hi", outer: Any = 5) -> str:
        """Optional arguments described on either side of the anyOf."""
        return "ok"

    get_user_model().objects.create_superuser("admin", "admin@example.com", "secret")
    with signed_in(live_server) as (tab, _, errors):
        tab.goto(f"{live_server.url}/admin/django_mcp/explorer/test/")
        rows = tab.locator('details[data-key="noted"] .mcp-fields .form-row')
        inner, outer = rows.nth(0), rows.nth(1)
        assert inner.locator("[name=inner]").input_value() == "hi"
        assert inner.locator(".help").text_content() == (
            'string or null (optional, default "hi") — Said inside'
        )
        assert outer.locator("[name=outer]").input_value() == "5"
        assert outer.locator(".help").text_content() == (
            "integer or null (optional, default 5) — Said outside"
        )
        assert errors == []
