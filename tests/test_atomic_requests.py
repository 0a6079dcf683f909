"""With ``ATOMIC_REQUESTS``, a request that fails leaves nothing behind, as in Django.

Django wraps each view in a transaction when ``ATOMIC_REQUESTS`` is on and rolls it back
when the view raises. django-mcp's view never raises for a failing tool: it answers
(server/tools.mdx, "Error Handling": a tool execution error is a result with ``isError``;
a protocol failure is a JSON-RPC error). So the view returned normally and Django
committed what the failing tool had written before it failed. Now the view dispatches in
a savepoint that an answer made by a failure rolls back: a tool error, an exceeded limit,
an exception turned into -32603 or another JSON-RPC error, and an ``input_required``
round (whose tool runs again from the start once the client answers,
basic/patterns/multi-round-trip.mdx). A success commits; what admission wrote in the
same transaction, and what code around the view writes after it, stay; without
``ATOMIC_REQUESTS`` nothing changes (each query commits by itself).
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.db import connections, transaction

from django_mcp import Context, ToolError
from django_mcp.auth.models import AccessToken
from django_mcp.protocol.errors import InvalidParams
from django_mcp.test import AsyncMCPClient
from django_mcp.test.results import InputRequiredError, MCPClientError
from testproject.books.models import Author, Book
from tests import urls as test_urls
from tests.helpers import override_mcp

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def atomic_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", True)


@pytest.fixture
def writing_tools(mcp_site: Any) -> Any:
    def write(name: str) -> None:
        Author.objects.create(name=name)

    @mcp_site.tool
    def write_then_succeed(name: str) -> str:
        """Write, then answer."""
        write(name)
        return "written"

    @mcp_site.tool
    def write_then_tool_error(name: str) -> str:
        """Write, then fail as a tool execution error (isError)."""
        write(name)
        raise ToolError("refused after writing")

    @mcp_site.tool
    def write_then_crash(name: str) -> str:
        """Write, then fail with an exception the server answers -32603."""
        write(name)
        raise RuntimeError("a bug after writing")

    @mcp_site.tool
    def write_then_invalid_params(name: str) -> str:
        """Write, then raise a protocol error (-32602)."""
        write(name)
        raise InvalidParams("refused after writing")

    @mcp_site.tool
    def write_then_ask(name: str, ctx: Context) -> str:
        """Write, then ask the client a question: this round ends unfinished."""
        write(name)
        answer = ctx.elicit("Sure?", {"sure": bool}, key="confirm")
        return f"answered {answer.action}"

    @mcp_site.tool
    def write_then_take_too_long(name: str, ctx: Context) -> str:
        """Write, then pass the time limit (TOOL_TIMEOUT, checked when the tool returns)."""
        write(name)
        time.sleep(1)
        ctx.check_cancelled()
        return "late"

    @mcp_site.tool
    def write_report_then_fail(name: str, ctx: Context) -> str:
        """Write, report progress (so a caller that asked gets a stream), then fail."""
        write(name)
        ctx.report_progress(1, total=2)
        raise ToolError("failed half-way")

    @mcp_site.tool
    def write_report_then_succeed(name: str, ctx: Context) -> str:
        """Write, report progress, then answer."""
        write(name)
        ctx.report_progress(1, total=1)
        return "written"

    @mcp_site.tool
    def write_a_book_then_fail(title: str) -> str:
        """Write to two tables, then fail."""
        author = Author.objects.create(name="Anon")
        Book.objects.create(isbn="9780000000002", title=title, author=author, price=Decimal(1))
        raise ToolError("no")

    return mcp_site


def names() -> list[str]:
    return list(Author.objects.values_list("name", flat=True))


def call(client: Any, tool: str) -> Any:
    """Call ``tool`` with ``name="Ghost"``: the result, or the JSON-RPC error raised."""
    try:
        return client.call_tool(tool, name="Ghost")
    except (MCPClientError, InputRequiredError) as exc:
        return exc


def test_a_tool_that_succeeds_commits(mcp_client, writing_tools, atomic_requests):
    assert call(mcp_client, "write_then_succeed").text == "written"
    assert names() == ["Ghost"]


@pytest.mark.parametrize(
    ("tool", "answer"),
    [
        ("write_then_tool_error", "isError"),
        ("write_then_crash", -32603),
        ("write_then_invalid_params", -32602),
        ("write_then_ask", "input_required"),
    ],
)
def test_a_failed_call_rolls_back_what_the_tool_wrote(
    mcp_client, writing_tools, atomic_requests, tool, answer
):
    """server/tools.mdx, "Error Handling": each failure is an answer, not an exception
    out of the view, and still leaves no write behind."""
    outcome = call(mcp_client, tool)
    if answer == "isError":
        assert outcome.is_error
    elif answer == "input_required":
        assert isinstance(outcome, InputRequiredError)
    else:
        assert outcome.code == answer
    assert names() == []


def test_a_tool_over_its_time_limit_rolls_back(mcp_client, writing_tools, atomic_requests):
    """server/tools.mdx: a call over ``TOOL_TIMEOUT`` is a tool execution error."""
    with override_mcp(TOOL_TIMEOUT=0.05):
        outcome = call(mcp_client, "write_then_take_too_long")
    assert outcome.is_error
    assert names() == []


def test_every_table_the_tool_wrote_is_rolled_back(mcp_client, writing_tools, atomic_requests):
    assert mcp_client.call_tool("write_a_book_then_fail", title="Never").is_error
    assert (Author.objects.count(), Book.objects.count()) == (0, 0)


def test_without_atomic_requests_a_write_stays_as_django_leaves_it(mcp_client, writing_tools):
    """No request transaction: each query committed when it ran, as in any Django view."""
    assert call(mcp_client, "write_then_tool_error").is_error
    assert names() == ["Ghost"]


def test_a_view_exempt_from_atomic_requests_is_left_alone(
    mcp_client, writing_tools, atomic_requests
):
    """``non_atomic_requests`` on the endpoint: Django opens no transaction around it, so
    there is nothing to roll back, and a transaction of the caller's (here the test's)
    is neither rolled back nor broken."""
    (endpoint,) = test_urls.urlpatterns[0].url_patterns
    transaction.non_atomic_requests(endpoint.callback)
    with transaction.atomic():
        assert call(mcp_client, "write_then_tool_error").is_error
        assert names() == ["Ghost"]
    assert names() == ["Ghost"]


def test_what_admission_wrote_stays_when_the_call_fails(
    writing_tools, atomic_requests, django_user_model
):
    """Under Django's ASGI handler admission runs in the view's thread, inside its
    transaction: the token's last use is written there. The savepoint undoes the tool's
    write only."""
    user = django_user_model.objects.create_user("writer")
    token, plaintext = AccessToken.objects.issue(user)
    client = AsyncMCPClient(site=writing_tools)
    client.credentials(plaintext)
    result = async_to_sync(client.call_tool)("write_then_tool_error", {"name": "Ghost"})
    assert result.is_error
    assert names() == []
    token.refresh_from_db()
    assert token.last_used_at is not None


def test_code_around_the_view_may_write_after_a_failed_call(
    mcp_client, writing_tools, atomic_requests
):
    """A decorator around the endpoint runs in the same transaction as the view: it can
    still write after a failed call (a transaction marked for rollback would refuse)."""
    (endpoint,) = test_urls.urlpatterns[0].url_patterns
    view = endpoint.callback

    def audited(request: Any, *args: Any, **kwargs: Any) -> Any:
        response = view(request, *args, **kwargs)
        Author.objects.create(name="audit")
        return response

    audited.mcp_server = view.mcp_server  # type: ignore[attr-defined]
    endpoint.callback = audited
    assert call(mcp_client, "write_then_tool_error").is_error
    assert set(names()) == {"audit"}  # one per request (the client lists the tools first)


def test_only_the_round_that_finishes_commits(mcp_client, writing_tools, atomic_requests):
    """basic/patterns/multi-round-trip.mdx: the client answers and sends the call again,
    and the tool runs from its start. Its first round's write was rolled back, so the
    write is made once, by the round that finishes."""
    result = mcp_client.call_tool(
        "write_then_ask",
        {"name": "Ghost"},
        answer={"confirm": {"action": "accept", "content": {"sure": True}}},
    )
    assert result.text == "answered accept"
    assert names() == ["Ghost"]


@pytest.mark.parametrize("outcome", ["fail", "succeed"])
def test_a_streamed_call_under_wsgi_is_in_the_views_transaction(
    mcp_client, writing_tools, atomic_requests, outcome
):
    """basic/utilities/progress.mdx: a call with a ``progressToken`` may be answered as a
    stream. Under WSGI its handler runs in the view, so in the view's transaction."""
    result = mcp_client.call_tool(
        f"write_report_then_{outcome}", name="Ghost", meta={"progressToken": 1}
    )
    assert [n["method"] for n in result.notifications] == ["notifications/progress"]
    assert result.is_error is (outcome == "fail")
    assert names() == ([] if outcome == "fail" else ["Ghost"])


@pytest.mark.parametrize("outcome", ["fail", "succeed"])
def test_a_streamed_call_past_the_live_stream_limit_runs_in_the_views_transaction(
    writing_tools, atomic_requests, outcome
):
    """Under ASGI past ``MAX_LIVE_STREAMS`` a streamed call is answered buffered, in the
    view (basic/patterns/progress.mdx: progress MAY be sent, so later is allowed), and so
    in the view's savepoint, as under WSGI: a failure undoes its writes. A hostile review
    found this load-dependent difference from the live path undocumented;
    docs/guides/tools.md now says so, and this pins it."""
    client = AsyncMCPClient(site=writing_tools)
    with override_mcp(MAX_LIVE_STREAMS=0):
        result = async_to_sync(client.call_tool)(
            f"write_report_then_{outcome}", {"name": "Ghost"}, meta={"progressToken": 1}
        )
    assert [n["method"] for n in result.notifications] == ["notifications/progress"]
    assert result.is_error is (outcome == "fail")
    assert names() == ([] if outcome == "fail" else ["Ghost"])


@pytest.mark.skipif(
    connections["default"].vendor == "sqlite",
    reason="SQLite: the view's open transaction locks the table the stream's thread writes",
)
def test_a_streamed_call_under_asgi_runs_outside_the_views_transaction(
    writing_tools, atomic_requests
):
    """Under ASGI a streamed call's handler runs in a thread of its own (its own
    connections), after the view returned, as a ``StreamingHttpResponse``'s content does:
    in autocommit, so what it wrote stays, as docs/guides/tools.md says."""
    client = AsyncMCPClient(site=writing_tools)
    result = async_to_sync(client.call_tool)(
        "write_report_then_fail", {"name": "Ghost"}, meta={"progressToken": 1}
    )
    assert [n["method"] for n in result.notifications] == ["notifications/progress"]
    assert result.is_error
    assert names() == ["Ghost"]
