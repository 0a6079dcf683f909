"""``django_mcp.test``: the MCP test client, through the real middleware and view.

Each test checks one thing the client does for its user, and that the server accepted what
it built (every request passes admission, so headers and ``_meta`` were conforming:
basic/transports/streamable-http.mdx). Responses are also schema-checked by the conftest.
"""

from __future__ import annotations

import gc
import inspect
import tomllib
from pathlib import Path
from typing import Annotated, Any

import pytest
from asgiref.sync import async_to_sync
from pydantic import BaseModel

from django_mcp import Context, MCPHeader, ToolError, notify_tools_changed
from django_mcp.auth.models import AccessToken
from django_mcp.listen import limits
from django_mcp.protocol import errors
from django_mcp.server import listing
from django_mcp.test import (
    AsyncMCPClient,
    InputRequiredError,
    MCPClient,
    MCPClientError,
    ToolCallResult,
    pytest_plugin,
)
from tests.helpers import override_mcp

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def mcp(mcp_site) -> MCPClient:
    return MCPClient(site=mcp_site)


class Sum(BaseModel):
    total: int


def test_a_tool_call_is_a_typed_result(mcp, mcp_site):
    """server/tools.mdx "Calling Tools": content, structuredContent and isError."""

    @mcp_site.tool
    def add(a: int, b: int) -> Sum:
        return Sum(total=a + b)

    result = mcp.call_tool("add", a=2, b=40)

    assert isinstance(result, ToolCallResult)
    assert result.structured == {"total": 42}
    assert result.is_error is False
    assert '"total":42' in result.text.replace(" ", "")


def test_a_tool_error_is_returned_and_a_protocol_error_raised(mcp, mcp_site):
    """server/tools.mdx "Error Handling": a tool execution error is a result the model
    reads (isError); an unknown tool is a protocol error, -32602."""

    @mcp_site.tool
    def fail() -> str:
        raise ToolError("No such book.")

    result = mcp.call_tool("fail")
    assert result.is_error is True
    assert result.text == "No such book."

    with pytest.raises(MCPClientError) as caught:
        mcp.call_tool("missing")
    assert caught.value.code == errors.INVALID_PARAMS
    assert caught.value.http_status == 200
    assert caught.value.data == {"name": "missing"}


def test_arguments_named_like_options_go_in_a_dict(mcp, mcp_site):
    """A tool argument called ``answer`` cannot be a keyword (it is an option); the
    positional dict carries it."""

    @mcp_site.tool
    def echo(answer: str) -> str:
        return answer

    assert mcp.call_tool("echo", {"answer": "42"}).text == "42"


def assert_five_tools_listed_in_three_pages(mcp: Any, mcp_site: Any, mcp_log: Any) -> None:
    """Declare five tools, list them two to a page: the client follows every cursor."""
    for name in ["e", "d", "c", "b", "a"]:
        mcp_site.tool(name=name)(lambda: "x")

    with override_mcp(PAGE_SIZE=2):
        names = [tool["name"] for tool in mcp.list_tools()]

    assert names == ["a", "b", "c", "d", "e"]
    assert len(mcp_log.exchanges) == 3


def test_list_tools_follows_every_cursor(mcp, mcp_site, mcp_log):
    """server/utilities/pagination.mdx: the client follows nextCursor to the end."""
    assert_five_tools_listed_in_three_pages(mcp, mcp_site, mcp_log)


def test_an_empty_next_cursor_is_followed(mcp, mcp_site, mcp_log, monkeypatch):
    """server/utilities/pagination.mdx: a client treats a *missing* ``nextCursor`` as the
    end of results, and a cursor is an opaque string (schema.json ``Cursor``, no minimum
    length; ``nextCursor``: "If present, there may be more results"). A server whose
    cursor is "" has more to give: the client used to stop there, on a falsy cursor."""
    real = listing.paginate
    issued: dict[str, str] = {}
    received: list[Any] = []

    def paginate(specs: Any, cursor: Any, **kwargs: Any) -> Any:
        """The real pages, with the first cursor handed out as "" (and read back)."""
        received.append(cursor)
        page, next_cursor = real(specs, issued["first"] if cursor == "" else cursor, **kwargs)
        if next_cursor is not None and not issued:
            issued["first"], next_cursor = next_cursor, ""
        return page, next_cursor

    monkeypatch.setattr(listing, "paginate", paginate)
    assert_five_tools_listed_in_three_pages(mcp, mcp_site, mcp_log)
    assert received[1] == ""  # sent back as it came


def test_x_mcp_header_arguments_are_mirrored_in_mcp_param_headers(mcp, mcp_site, mcp_log):
    """basic/transports/streamable-http.mdx "Custom Headers from Tool Parameters": the
    client sends Mcp-Param-Region with the argument (base64-wrapped when not plain ASCII);
    without it the server would answer 400 -32020."""

    @mcp_site.tool
    def orders(region: Annotated[str, MCPHeader("Region")], limit: int = 1) -> str:
        return f"{region}:{limit}"

    assert mcp.call_tool("orders", region="eu-west", limit=3).text == "eu-west:3"
    assert mcp.call_tool("orders", region="Zürich").text == "Zürich:1"
    assert all(exchange.status == 200 for exchange in mcp_log.exchanges)


def test_a_non_ascii_name_travels_in_the_base64_form(mcp, mcp_site):
    """basic/transports/streamable-http.mdx: Mcp-Name carries ``=?base64?...?=`` for a
    value that is not plain ASCII; the server decodes it and finds it equal to the body."""

    @mcp_site.resource("notes://{title}", mime_type="text/plain")
    def note(title: str) -> str:
        return f"note {title}"

    assert mcp.read_resource("notes://café").text == "note café"


def test_input_requests_are_answered_from_a_dict_or_a_callback(mcp, mcp_site):
    """basic/patterns/mrtr.mdx: the client retries with inputResponses and the echoed
    requestState under a new id until the result is complete."""

    @mcp_site.tool
    def greet(ctx: Context) -> str:
        answer = ctx.elicit("Name?", {"name": str}, key="name")
        return f"Hello, {(answer.content or {}).get('name')}!"

    accepted = {"action": "accept", "content": {"name": "Ada"}}
    assert mcp.call_tool("greet", answer={"name": accepted}).text == "Hello, Ada!"

    asked: list[tuple[str, str]] = []

    def answer(key: str, request: dict[str, Any]) -> dict[str, Any]:
        asked.append((key, request["method"]))
        return {"action": "accept", "content": {"name": "Grace"}}

    assert mcp.call_tool("greet", answer=answer).text == "Hello, Grace!"
    assert asked == [("name", "elicitation/create")]

    with pytest.raises(InputRequiredError) as caught:
        mcp.call_tool("greet")
    assert list(caught.value.input_requests) == ["name"]


def test_progress_notifications_come_with_the_result(mcp, mcp_site):
    """basic/patterns/progress.mdx: with a progressToken, notifications/progress arrive
    on the reply's stream before the result."""

    @mcp_site.tool
    def work(ctx: Context) -> str:
        ctx.report_progress(1, total=2)
        ctx.report_progress(2, total=2)
        return "done"

    result = mcp.call_tool("work", meta={"progressToken": "t1"})

    assert result.text == "done"
    assert [n["params"]["progress"] for n in result.notifications] == [1, 2]
    assert {n["params"]["progressToken"] for n in result.notifications} == {"t1"}


@pytest.mark.django_db
def test_force_authenticate_makes_the_user_the_caller(mcp, mcp_site, django_user_model):
    """basic/index.mdx "Statelessness": the tool sees the Django user of each request."""

    @mcp_site.tool
    def whoami(ctx: Context) -> str:
        return ctx.user.get_username() if ctx.user.is_authenticated else "anonymous"

    mcp.force_authenticate(django_user_model.objects.create(username="ada"))
    assert mcp.call_tool("whoami").text == "ada"
    mcp.force_authenticate(None)
    assert mcp.call_tool("whoami").text == "anonymous"


def test_credentials_send_a_bearer_token(mcp, mcp_site, django_user_model):
    """basic/authorization.mdx: ``Authorization: Bearer <token>`` on every request (a
    token this site issued: one it cannot validate would be refused)."""

    @mcp_site.tool
    def auth(ctx: Context) -> str:
        return ctx.request.headers.get("Authorization", "none")

    user = django_user_model.objects.create_user("ada")
    _, token = AccessToken.objects.issue(user)
    mcp.credentials(token=token)
    assert mcp.call_tool("auth").text == f"Bearer {token}"
    mcp.credentials()
    assert mcp.call_tool("auth").text == "none"


def test_raw_post_is_for_malformed_input(mcp, mcp_site):
    """basic/transports/streamable-http.mdx: a body that is not JSON is -32700, 400."""
    response = mcp.post(b"{not json", headers={"Accept": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == errors.PARSE_ERROR


def test_discover_prompts_resources_and_completion(mcp, mcp_site):
    """server/discover, prompts/get, resources/read and completion/complete."""

    @mcp_site.prompt(complete={"topic": lambda value: ["django", "dogs"]})
    def ask(topic: str) -> str:
        return f"Tell me about {topic}."

    @mcp_site.resource("notes://about", mime_type="text/plain")
    def about() -> str:
        return "about"

    discovered = mcp.discover()
    assert "2026-07-28" in discovered.supported_versions
    assert {"prompts", "resources"} <= set(discovered.capabilities)
    assert discovered.server_info is not None

    prompt = mcp.get_prompt("ask", topic="django")
    assert prompt.messages[0]["content"]["text"] == "Tell me about django."
    assert mcp.read_resource("notes://about").contents[0]["text"] == "about"
    completion = mcp.complete({"type": "ref/prompt", "name": "ask"}, "topic", "d")
    assert completion.values == ["django", "dogs"]
    assert [p["name"] for p in mcp.list_prompts()] == ["ask"]
    assert [r["uri"] for r in mcp.list_resources()] == ["notes://about"]


def test_listen_yields_the_acknowledgement_then_changes(mcp, mcp_site, settings):
    """basic/patterns/subscriptions.mdx: the first message acknowledges the filter; a
    change the client opted into follows; closing the stream ends the subscription."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_MAX_SECONDS": 5, "LISTEN_WSGI_STREAMS": 1}
    mcp_site.tool(name="t")(lambda: "x")

    with mcp.listen(toolsListChanged=True) as stream:
        ack = next(stream)
        notify_tools_changed(site=mcp_site)
        change = next(stream)

    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert change["method"] == "notifications/tools/list_changed"


def test_a_refused_listen_filter_raises_before_any_stream(mcp, mcp_site):
    """basic/patterns/subscriptions.mdx: a malformed filter is -32602."""
    with pytest.raises(MCPClientError) as caught:
        mcp.listen(toolsListChanged="yes")
    assert caught.value.code == errors.INVALID_PARAMS


def test_the_async_client_calls_through_the_asgi_handler(mcp_site):
    """The same calls over django.test.AsyncClient: a progress stream is live (the ASGI
    path), and a protocol error raises."""

    @mcp_site.tool
    def work(ctx: Context) -> str:
        ctx.report_progress(1, total=1)
        return "done"

    async def scenario() -> tuple[Any, list[str], int]:
        client = AsyncMCPClient(site=mcp_site)
        result = await client.call_tool("work", meta={"progressToken": 7})
        names = [tool["name"] for tool in await client.list_tools()]
        try:
            await client.call_tool("nope")
        except MCPClientError as exc:
            return result, names, exc.code
        raise AssertionError("no error")

    result, names, code = async_to_sync(scenario)()
    assert result.text == "done"
    assert [n["method"] for n in result.notifications] == ["notifications/progress"]
    assert names == ["work"]
    assert code == errors.INVALID_PARAMS


def test_leaving_the_async_listen_block_ends_the_servers_stream(mcp_site, settings):
    """docs/guides/testing.md: leaving the ``async with`` closes the stream, on the server
    too: its slot in the listen limits is free again at once (one stream per caller here,
    so a second listen would be refused with -31000 otherwise)."""
    settings.DJANGO_MCP = {
        **settings.DJANGO_MCP,
        "LISTEN_MAX_SECONDS": 5,
        "LISTEN_MAX_STREAMS_PER_CALLER": 1,
    }
    mcp_site.tool(name="t")(lambda: "x")

    async def scenario() -> list[int]:
        client = AsyncMCPClient(site=mcp_site)
        held = []
        for _ in range(2):
            async with client.listen(toolsListChanged=True) as stream:
                async for message in stream:
                    assert message["method"] == "notifications/subscriptions/acknowledged"
                    held.append(limits.open_streams())
                    break
            held.append(limits.open_streams())
        return held

    gc.disable()  # the stream must end because it was closed, not because it was collected
    try:
        assert async_to_sync(scenario)() == [1, 0, 1, 0]
    finally:
        gc.enable()


def test_a_refused_async_listen_raises_each_time_it_is_opened(mcp_site):
    """basic/patterns/subscriptions.mdx: a malformed filter is -32602, before any stream;
    opening or reading the refused stream again raises again, never an empty stream."""

    async def scenario() -> list[int]:
        stream = AsyncMCPClient(site=mcp_site).listen(toolsListChanged="yes")
        codes = []
        for attempt in range(3):
            try:
                if attempt == 2:
                    await anext(stream)
                else:
                    async with stream:
                        pass
            except MCPClientError as exc:
                codes.append(exc.code)
        return codes

    assert async_to_sync(scenario)() == [errors.INVALID_PARAMS] * 3


def test_both_clients_offer_every_protocol_operation_with_one_signature():
    """The sync and async clients run the same operations of the I/O-free core: each
    public method of one is a method of the other, with the same parameters."""

    def operations(cls: type) -> dict[str, list[str]]:
        return {
            name: list(inspect.signature(member).parameters)
            for name, member in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_") and name not in {"exchange", "run"}
        }

    assert operations(MCPClient) == operations(AsyncMCPClient)
    assert {"request", "list_resource_templates", "call_tool", "listen"} <= set(
        operations(AsyncMCPClient)
    )


def test_the_async_client_sends_a_notification_as_the_sync_one_does(mcp_site):
    """basic/transports/streamable-http.mdx: a notification POSTed to the endpoint is
    accepted with 202 and no body. The testing guide says the async client has the sync
    one's methods, awaited; it had no ``notify``."""

    async def scenario() -> tuple[int, bytes]:
        response = await AsyncMCPClient().notify("notifications/cancelled", {"requestId": 1})
        return response.status_code, response.content  # type: ignore[attr-defined]

    sync = MCPClient().notify("notifications/cancelled", {"requestId": 1})
    assert async_to_sync(scenario)() == (sync.status_code, sync.content) == (202, b"")


def test_the_fixtures_reach_the_default_site(mcp_client):
    """The plugin's ``mcp_client`` posts to ``reverse("django_mcp:endpoint")``: the
    project's own site (the demo bookshop here)."""
    assert mcp_client.path == "/mcp"
    assert "whoami" in {tool["name"] for tool in mcp_client.list_tools()}
    assert mcp_client.call_tool("whoami").text.startswith("You are django-mcp-test")


def test_the_pytest_plugin_is_registered_by_its_entry_point():
    """pyproject.toml's pytest11 entry point names the module that holds the fixtures."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    target = project["project"]["entry-points"]["pytest11"]["django_mcp"]
    assert target == pytest_plugin.__name__
    for name in ("mcp_client", "async_mcp_client", "mcp_endpoint"):
        assert hasattr(pytest_plugin, name)
