"""The code in README.md and docs/ is real: the example files run here, and the Markdown
shows exactly those files (scripts/sync_docs.py keeps them in step).

Examples that declare tools on the default site (``@django_mcp.tool``, ``django_mcp.site``)
run against a fresh site instead: ``django_mcp.sites.site`` is swapped for the ``mcp_site``
fixture while the file is executed, so the default site is never touched.
"""

from __future__ import annotations

import importlib.util
import sys
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.core.checks import Error
from django.urls import resolve

import django_mcp
import django_mcp.sites
from django_mcp import checks
from django_mcp.conf import DEFAULTS
from django_mcp.protocol import errors
from tests import urls as test_urls
from tests.helpers import assert_error, call_tool, mcp_post, request_meta, result_of

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from django.test import Client

    from django_mcp.sites import MCPSite

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "examples"


def load_sync_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sync_docs", REPO / "scripts" / "sync_docs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sync_docs = load_sync_docs()


@pytest.fixture
def run_example(mcp_site: MCPSite, monkeypatch: pytest.MonkeyPatch) -> Callable[..., ModuleType]:
    """Execute an example file with the default site swapped for ``mcp_site``."""
    monkeypatch.setattr(django_mcp.sites, "site", mcp_site)
    # ``from django_mcp import site`` reads the package attribute, cached on first access.
    monkeypatch.setattr(django_mcp, "site", mcp_site, raising=False)

    def run(relative: str, *, package: str | None = None) -> ModuleType:
        path = EXAMPLES / relative
        stem = relative.removesuffix(".py").replace("/", "_")
        name = f"{package}.docs_example_{stem}" if package else f"docs_example_{stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
        return module

    return run


def tools_of(client: Client) -> dict[str, dict[str, Any]]:
    result = result_of(mcp_post(client, "tools/list"))
    return {tool["name"]: tool for tool in result["tools"]}


# -- the Markdown shows the files --------------------------------------------------------


def test_readme_and_docs_show_the_current_example_files_and_settings_table():
    stale = [str(path.relative_to(REPO)) for path in sync_docs.stale_files()]
    assert stale == [], "run: python scripts/sync_docs.py"


@pytest.mark.parametrize(
    ("page", "table"),
    [
        ("docs/settings.md", "TABLE"),
        ("docs/errors.md", "ERROR_TABLE"),
        ("docs/checks.md", "CHECKS_TABLE"),
    ],
)
def test_each_generated_table_is_still_on_its_page(page: str, table: str) -> None:
    """A page that lost its markers would be skipped by the sync, silently."""
    text = (REPO / page).read_text(encoding="utf-8")
    assert getattr(sync_docs, table).search(text), f"{page} lost its generated table"


def test_every_example_file_of_the_readme_tutorial_and_tools_guide_is_shown():
    shown = sync_docs.referenced_examples()
    patterns = ("install/*", "tutorial/**/*", "tools/*", "testing/*", "curl_*", "sdk_client*")
    examples = {
        str(path.relative_to(REPO))
        for pattern in patterns
        for path in EXAMPLES.glob(pattern)
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert sorted(examples - shown) == []


#: Guide (docs/guides/NAME.md, showing docs/examples/NAME_example.py) -> the module that runs
#: that example file, so the guide's code is the code under test.
GUIDE_TESTS = {
    "completion": "tests/test_completion.py",
    "modeltools": "tests/modeltools/test_declaration.py",
    "permissions": "tests/test_permissions.py",
    "prompts": "tests/test_prompts.py",
    "resources": "tests/test_resources.py",
}


@pytest.mark.parametrize("name", sorted(GUIDE_TESTS))
def test_the_guide_shows_the_example_file_tested_here(name: str) -> None:
    """docs/guides/NAME.md shows the code of docs/examples/NAME_example.py as it is
    (scripts/sync_docs.py keeps the blocks in step), so the guide's code is what the module
    named in GUIDE_TESTS runs."""
    guide = (REPO / "docs" / "guides" / f"{name}.md").read_text(encoding="utf-8")

    assert f"<!-- example: docs/examples/{name}_example.py#" in guide
    assert sync_docs.render(guide) == guide
    assert f"docs.examples import {name}_example" in (REPO / GUIDE_TESTS[name]).read_text()


def test_the_settings_table_lists_every_key_of_defaults():
    table = sync_docs.settings_table()
    for key in DEFAULTS:
        assert f"| `{key}` |" in table


# -- install ----------------------------------------------------------------------------


def test_install_settings_pass_the_django_mcp_system_checks(settings: Any):
    namespace: dict[str, Any] = {}
    exec((EXAMPLES / "install/settings.py").read_text(), namespace)
    settings.MIDDLEWARE = namespace["MIDDLEWARE"]
    settings.DJANGO_MCP = namespace["DJANGO_MCP"]

    messages = checks.check_middleware(None) + checks.check_settings(None)

    assert "django_mcp" in namespace["INSTALLED_APPS"]
    assert [m for m in messages if isinstance(m, Error)] == []


def test_install_urls_serve_the_endpoint_with_and_without_a_slash(
    settings: Any, monkeypatch: pytest.MonkeyPatch
):
    namespace: dict[str, Any] = {}
    exec((EXAMPLES / "install/urls.py").read_text(), namespace)
    monkeypatch.setattr(test_urls, "urlpatterns", namespace["urlpatterns"])
    settings.ROOT_URLCONF = "tests.urls"

    assert resolve("/mcp").url_name == "endpoint"
    assert resolve("/mcp/").url_name == "endpoint"


@pytest.mark.django_db
def test_install_mcp_module_counts_books(run_example: Callable[..., ModuleType], client: Client):
    from testproject.books.models import Author, Book

    run_example("install/mcp.py", package="testproject.books")
    author = Author.objects.create(name="Frank Herbert")
    Book.objects.create(isbn="9780441172719", title="Dune", author=author)

    result = result_of(call_tool(client, "count_books", {"title_contains": "dun"}))

    assert result["content"] == [{"type": "text", "text": "1 book(s) found."}]


# -- tutorial ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_tutorial_tools_search_get_and_identify(
    run_example: Callable[..., ModuleType], client: Client
):
    from testproject.books.models import Author, Book

    run_example("tutorial/books/mcp.py", package="testproject.books")
    author = Author.objects.create(name="Frank Herbert")
    Book.objects.create(isbn="9780441172719", title="Dune", author=author, price=Decimal("9.5"))

    count = result_of(call_tool(client, "count_books", {}))
    found = result_of(call_tool(client, "search_books", {"query": "dune"}))
    missing = result_of(call_tool(client, "get_book", {"isbn": "1"}))
    me = result_of(call_tool(client, "whoami", {}))

    assert count["content"][0]["text"] == "The catalogue has 1 books."
    books = found["structuredContent"]
    books = books["result"] if isinstance(books, dict) else books
    assert books == [
        {"isbn": "9780441172719", "title": "Dune", "author": "Frank Herbert", "price": "9.50"}
    ]
    assert missing["isError"] is True
    assert me["content"][0]["text"] == "You are pytest, speaking MCP 2026-07-28."
    assert "outputSchema" in tools_of(client)["search_books"]


# -- guides/tools.md --------------------------------------------------------------------


def test_basics_schema_comes_from_hints_and_docstring(
    run_example: Callable[..., ModuleType], client: Client
):
    run_example("tools/basics.py")

    tools = tools_of(client)
    convert = tools["convert_temperature"]
    schema = convert["inputSchema"]
    assert convert["description"] == "Convert a temperature from Celsius to Fahrenheit."
    assert convert["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
    assert schema["required"] == ["celsius"]
    assert schema["properties"]["precision"]["maximum"] == 4
    assert schema["properties"]["celsius"]["description"] == "Degrees Celsius."
    assert tools["shout"]["title"] == "Shout"


def test_basics_calls_sync_and_async_tools_and_reports_bad_arguments_as_tool_errors(
    run_example: Callable[..., ModuleType], client: Client
):
    run_example("tools/basics.py")

    converted = result_of(call_tool(client, "convert_temperature", {"celsius": 100}))
    shouted = result_of(call_tool(client, "shout", {"text": "hi"}))
    invalid = result_of(call_tool(client, "convert_temperature", {"celsius": 1, "precision": 9}))

    assert converted["content"][0]["text"] == "212.0 °F"
    assert shouted["content"][0]["text"] == "HI!"
    assert invalid["isError"] is True


def test_context_is_injected_and_not_in_the_schema(
    run_example: Callable[..., ModuleType], client: Client
):
    run_example("tools/context.py")

    schema = tools_of(client)["count_to"]["inputSchema"]
    me = result_of(call_tool(client, "whoami", {}))
    counted = result_of(call_tool(client, "count_to", {"number": 3}))

    assert list(schema["properties"]) == ["number"]
    assert me["content"][0]["text"] == "anonymous via pytest, MCP 2026-07-28"
    assert counted["content"][0]["text"] == "Counted to 3."


def test_elicitation_asks_first_then_completes_with_the_answer(
    run_example: Callable[..., ModuleType], client: Client
):
    """basic/patterns/mrtr.mdx: the first round returns ``resultType: "input_required"``
    with ``inputRequests`` and a ``requestState``; the client retries with
    ``inputResponses`` and the echoed ``requestState``."""
    run_example("tools/elicitation.py")
    meta = request_meta(capabilities={"elicitation": {"form": {}}})
    call = {"name": "cancel_order", "arguments": {"order_id": 7}}

    first = result_of(mcp_post(client, "tools/call", call, meta=meta))
    answer = {"action": "accept", "content": {"confirm": True}}
    retry = {**call, "inputResponses": {"elicitation": answer}}
    retry["requestState"] = first["requestState"]
    final = result_of(mcp_post(client, "tools/call", retry, meta=meta))

    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["elicitation"]["method"] == "elicitation/create"
    assert final["content"] == [{"type": "text", "text": "Order 7 is cancelled."}]


def test_content_examples_return_image_links_and_a_full_result(
    run_example: Callable[..., ModuleType], client: Client
):
    run_example("tools/content.py")

    logo = result_of(call_tool(client, "logo", {}))["content"]
    links = result_of(call_tool(client, "reading_list", {}))["content"]
    report = result_of(call_tool(client, "stock_report", {}))

    assert [block["type"] for block in logo] == ["image"]
    assert logo[0]["mimeType"] == "image/png"
    assert [block["type"] for block in links] == ["text", "resource_link", "resource_link"]
    assert links[2]["uri"] == "books://9780441172719"
    assert report["content"][0]["annotations"] == {"audience": ["user"]}
    assert report.get("isError", False) is False


def test_tool_error_becomes_a_result_with_is_error(
    run_example: Callable[..., ModuleType], client: Client
):
    run_example("tools/errors.py")

    failed = result_of(call_tool(client, "divide", {"dividend": 1, "divisor": 0}))
    divided = result_of(call_tool(client, "divide", {"dividend": 1, "divisor": 4}))

    assert failed["isError"] is True
    assert divided["content"][0]["text"] == "0.25"


def test_structured_output_has_an_output_schema_and_structured_content(
    run_example: Callable[..., ModuleType], client: Client
):
    run_example("tools/structured.py")

    tool = tools_of(client)["forecast"]
    result = result_of(call_tool(client, "forecast", {"city": "Lyon"}))

    assert tool["outputSchema"]["required"] == ["city", "temperature_c", "conditions"]
    assert result["structuredContent"] == {
        "city": "Lyon",
        "temperature_c": 21.5,
        "conditions": "sunny",
    }


def test_mcp_header_argument_must_be_mirrored_in_its_header(
    run_example: Callable[..., ModuleType], client: Client
):
    """basic/transports/streamable-http.mdx: a tool argument declared with
    ``x-mcp-header`` must be mirrored in ``Mcp-Param-{Name}``; a missing header is -32020."""
    run_example("tools/headers.py")

    schema = tools_of(client)["list_orders"]["inputSchema"]
    ok = call_tool(client, "list_orders", {"region": "eu"}, headers={"Mcp-Param-Region": "eu"})
    missing = call_tool(client, "list_orders", {"region": "eu"})

    assert schema["properties"]["region"]["x-mcp-header"] == "Region"
    assert "eu" in result_of(ok)["content"][0]["text"]
    assert_error(missing, 400, errors.HEADER_MISMATCH)


def test_a_second_site_has_its_own_endpoint_and_tools(
    run_example: Callable[..., ModuleType],
    client: Client,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
):
    module = run_example("tools/sites.py")
    monkeypatch.setattr(test_urls, "urlpatterns", module.urlpatterns)
    settings.ROOT_URLCONF = "tests.urls"

    staff_tools = tools_of_path(client, "/staff/mcp")
    called = result_of(call_tool(client, "rebuild_search_index", {}, path="/staff/mcp/"))

    assert list(staff_tools) == ["rebuild_search_index"]
    assert called["content"][0]["text"] == "Rebuild scheduled."
    assert module.staff is not django_mcp.sites.site


def tools_of_path(client: Client, path: str) -> dict[str, dict[str, Any]]:
    result = result_of(mcp_post(client, "tools/list", path=path))
    return {tool["name"]: tool for tool in result["tools"]}


def test_registration_api_registers_and_replaces_tools(
    run_example: Callable[..., ModuleType], mcp_site: MCPSite, client: Client
):
    run_example("tools/registration.py")

    replaced = result_of(call_tool(client, "search", {"query": "x"}))

    assert sorted(tools_of(client)) == ["search", "word_count"]
    assert replaced["content"][0]["text"] == "better results"
    assert mcp_site.is_registered("word_count")


# -- guides/testing.md ------------------------------------------------------------------


@pytest.mark.django_db
def test_the_testing_guide_example_tests_pass(
    run_example: Callable[..., ModuleType], mcp_site: MCPSite, django_user_model: Any
):
    """Each test function of the guide's example file passes against its tools, with the
    fixtures the django_mcp pytest plugin and pytest-django provide."""
    import inspect

    from django_mcp.test import MCPClient

    module = run_example("testing/test_bookshop.py")
    tests = [value for name, value in vars(module).items() if name.startswith("test_")]
    assert len(tests) == 5
    for test in tests:
        fixtures = {"mcp_client": MCPClient(site=mcp_site), "django_user_model": django_user_model}
        test(**{name: fixtures[name] for name in inspect.signature(test).parameters})
