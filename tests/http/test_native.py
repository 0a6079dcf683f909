"""The native ASGI path (``NativeMCP``) answers exactly as Django's path does.

Every test here that takes ``app`` runs twice: through Django's ASGI handler (with
``BodyLimit``, as ``testproject/asgi.py`` serves it) and through ``NativeMCP`` (as
``testproject/asgi_native.py`` serves it), in-process over httpx's ASGI transport. The
expectations are the same for both, so a difference in status, JSON-RPC error code, headers
or request-log row is a failure (basic/transports/streamable-http.mdx, "Sending Messages to
the Server"; the codes are docs/errors.md's). The rest pins what only the native path does:
it skips the project's other middleware for MCP POSTs, forwards everything else to Django,
runs sync code in a worker thread that closes its database connections, and resolves the
MCP path once.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.core import signals
from django.core.asgi import get_asgi_application
from django.db import connections
from django.http import HttpResponse
from django.urls import URLResolver, path

from django_mcp.auth.models import TOKEN_PREFIX
from django_mcp.exceptions import ToolError
from django_mcp.http import native
from django_mcp.http.asgi import BodyLimit
from django_mcp.http.native import NativeMCP
from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from django_mcp.server.context import Context
from tests import urls as test_urls
from tests.helpers import OMIT, mcp_body, mcp_headers, override_mcp
from tests.http.native_support import (
    STAMP,
    assert_a_failed_view_transaction_is_an_internal_error,
    assert_every_exchange_recorded,
    assert_protocol_errors_answered,
    call,
    error,
    mcp,
    plain,
    routing_facts,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from django_mcp.sites import MCPSite

APPS: dict[str, Callable[[], Any]] = {
    "django": lambda: BodyLimit(get_asgi_application()),
    "native": lambda: NativeMCP(get_asgi_application()),
}
#: Only against a hang: a test waits this long at most for something that must happen.
HANG_GUARD_SECONDS = 30

#: Thread ids seen by the tools, in call order.
seen_threads: list[int] = []


@pytest.fixture
def site(mcp_site: MCPSite, settings: Any) -> MCPSite:
    @mcp_site.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        seen_threads.append(threading.get_ident())
        return a + b

    @mcp_site.tool
    async def async_add(a: int, b: int) -> int:
        """Add two numbers, asynchronously."""
        seen_threads.append(threading.get_ident())
        return a + b

    @mcp_site.tool
    async def async_refuse(reason: str) -> str:
        """Refuse, as a tool execution error."""
        raise ToolError(reason)

    @mcp_site.tool
    async def async_break() -> str:
        """Fail with an unexpected exception."""
        raise RuntimeError("secret detail")

    @mcp_site.tool
    async def async_sleep(seconds: float) -> str:
        """Sleep, asynchronously."""
        await asyncio.sleep(seconds)
        return "slept"

    @mcp_site.tool
    async def async_sync_code() -> int:
        """Await sync code (as the async ORM does): it runs in a thread for the request."""

        def in_thread() -> int:
            seen_threads.append(threading.get_ident())
            return threading.get_ident()

        return await sync_to_async(in_thread)()

    @mcp_site.tool
    def how_routed(ctx: Context) -> dict[str, Any]:
        """What Django's handler sets up for a view: the route, the URLconf, a transaction."""
        return routing_facts(ctx)

    @mcp_site.tool
    async def async_how_routed(ctx: Context) -> dict[str, Any]:
        """The same, from an ``async def`` tool (the database is asked in a thread)."""
        return await sync_to_async(routing_facts)(ctx)

    @mcp_site.tool(task="required")
    def only_as_task() -> str:
        """Runs only as an MCP task."""
        return "never"

    test_urls.urlpatterns.append(path("plain", plain))
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "tests.http.native_support.StampMiddleware"]
    seen_threads.clear()
    return mcp_site


@pytest.fixture(params=sorted(APPS))
def app(request: pytest.FixtureRequest, site: MCPSite) -> Any:
    return APPS[request.param]()


def exchange(app: Any, *requests: dict[str, Any]) -> list[httpx.Response]:
    """Send ``requests`` (httpx ``request`` keyword arguments) in order on one event loop."""

    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return [await c.request(**{"method": "POST", "url": "/mcp", **r}) for r in requests]

    return asyncio.run(run())


async def chunked(data: bytes) -> Any:
    """A body of unknown length (``Transfer-Encoding: chunked``), in 1 KB pieces."""
    for start in range(0, len(data), 1024):
        yield data[start : start + 1024]


@pytest.mark.django_db
@pytest.mark.parametrize("tool", ["add", "async_add"])
def test_tools_call_is_answered_the_same(app: Any, tool: str):
    """server/tools.mdx: a ``CallToolResult`` with the text and the structured content."""
    (response,) = exchange(app, call(tool, a=1, b=2))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    result = response.json()["result"]
    assert result["content"] == [{"type": "text", "text": "3"}]
    assert result["structuredContent"] == 3
    assert result["resultType"] == "complete"


@pytest.mark.django_db
def test_responses_declare_their_length(app: Any):
    """A JSON response carries ``Content-Length`` on both paths (Django's adds it in
    ``CommonMiddleware``), so the server sends it unchunked; an empty 202 declares 0."""
    note = mcp_body("notifications/cancelled", {"requestId": 7}, id=OMIT)
    answered, accepted = exchange(
        app,
        call("add", a=1, b=2),
        {"content": json.dumps(note), "headers": mcp_headers(note)},
    )
    assert answered.headers["content-length"] == str(len(answered.content))
    assert (accepted.status_code, accepted.headers["content-length"]) == (202, "0")


@pytest.mark.django_db
def test_an_accepted_notification_is_202_without_a_body(app: Any):
    """basic/transports/streamable-http.mdx: a notification is answered 202, no body."""
    body = mcp_body("notifications/cancelled", {"requestId": 7}, id=OMIT)
    (response,) = exchange(app, {"content": json.dumps(body), "headers": mcp_headers(body)})
    assert (response.status_code, response.content) == (202, b"")
    assert "content-type" not in response.headers  # an empty body is labelled nothing


@pytest.mark.django_db
def test_a_view_transaction_that_cannot_open_is_an_internal_error(app: Any):
    """-32603 with the request's id (HTTP 200) when ``ATOMIC_REQUESTS``' transaction
    cannot open, as Django's path answers it (docs/deployment.md, "When the database is
    down")."""
    assert_a_failed_view_transaction_is_an_internal_error(exchange, app)


@pytest.mark.django_db
def test_protocol_errors_have_the_same_status_and_code(app: Any):
    """-32020 (a header that disagrees with the body), -32022 (an unsupported revision),
    -32021 (a required client capability missing), -32601 (an unknown method)."""
    assert_protocol_errors_answered(exchange, app)


@pytest.mark.django_db
def test_refusals_before_admission_are_the_same(app: Any):
    """405 for GET (with ``Allow``), 403 for a foreign ``Origin``, 413 over
    ``MAX_REQUEST_BYTES`` (declared or not), 401 for a bad bearer token."""
    big = json.dumps(mcp_body("tools/call", {"name": "add", "arguments": {"x": "y" * 5000}}))
    with override_mcp(MAX_REQUEST_BYTES=4096):
        get, origin, declared, unknown_length, token = exchange(
            app,
            {"method": "GET"},
            mcp("tools/list", Origin="https://evil.example"),
            {"content": big, "headers": {"Content-Type": "application/json"}},
            {"content": chunked(big.encode()), "headers": {"Content-Type": "application/json"}},
            mcp("tools/list", Authorization=f"Bearer {TOKEN_PREFIX}not-issued"),
        )
    assert get.status_code == 405
    assert get.headers["allow"] == "POST"
    error(origin, 403, -32600)
    error(declared, 413, -32600)
    error(unknown_length, 413, -32600)
    error(token, 401, -32600)
    assert token.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.django_db
def test_a_host_outside_allowed_hosts_is_400(app: Any):
    """DNS rebinding (basic/transports/streamable-http.mdx, "Security Warning"): a ``Host``
    that ``ALLOWED_HOSTS`` refuses is a 400 on both paths (Django's ``DisallowedHost``),
    never a 500. The native path records it with its JSON-RPC error; on Django's path
    ``CommonMiddleware``, listed before ``MCPMiddleware``, refuses it before the MCP
    middleware sees it (no record; see the next test)."""
    (response,) = exchange(app, mcp("tools/list", Host="evil.example"))
    assert response.status_code == 400
    recorder.flush()
    rows = list(RequestLog.objects.values_list("http_status", "error_code"))
    if isinstance(app, NativeMCP):
        assert response.json()["error"]["code"] == -32600
        assert rows == [(400, -32600)]


@pytest.mark.django_db
def test_under_asgi_a_refused_host_is_recorded_when_mcp_middleware_comes_first(
    site: MCPSite, settings: Any
):
    """With ``MCPMiddleware`` listed before ``CommonMiddleware`` it wraps the refusal, and
    records it (Django's own 400 page: no JSON-RPC code), as the native path does."""
    # Only these two, both async-capable, so that MCPMiddleware runs as a coroutine.
    settings.MIDDLEWARE = [
        "django_mcp.middleware.MCPMiddleware",
        "django.middleware.common.CommonMiddleware",
    ]

    (response,) = exchange(get_asgi_application(), mcp("tools/list", Host="evil.example"))

    assert response.status_code == 400
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(400, None)]


@pytest.mark.django_db
def test_rate_limits_answer_429_with_retry_after(app: Any):
    """An exceeded limit is HTTP 429, -31429 and ``Retry-After`` on both paths."""
    from django.core.cache import caches

    caches["default"].clear()
    with override_mcp(RATE_LIMIT_IP="2/m"):
        first, second, third = exchange(app, call("add", a=1, b=1), *[call("add", a=1, b=1)] * 2)
    caches["default"].clear()
    assert (first.status_code, second.status_code) == (200, 200)
    error(third, 429, -31429)
    assert int(third.headers["retry-after"]) > 0


@pytest.mark.django_db
def test_every_exchange_is_recorded_the_same(app: Any):
    """One request-log row per request, with the same facts on both paths."""
    assert_every_exchange_recorded(exchange, app)


@pytest.mark.django_db
def test_async_tools_fail_the_same(app: Any):
    """server/tools.mdx, "Error Handling": a ``ToolError`` and invalid arguments are tool
    execution errors (``isError``); an unexpected exception is a masked -32603; a call over
    ``TOOL_TIMEOUT`` is a tool execution error naming the limit."""
    with override_mcp(TOOL_TIMEOUT=0.2):
        refused, invalid, broken, slow = exchange(
            app,
            call("async_refuse", reason="not today"),
            call("async_add", a="one", b=2),
            call("async_break"),
            call("async_sleep", seconds=5),
        )
    assert refused.json()["result"]["isError"] is True
    assert refused.json()["result"]["content"][0]["text"] == "not today"
    assert invalid.json()["result"]["isError"] is True
    assert "Invalid arguments for tool async_add" in invalid.json()["result"]["content"][0]["text"]
    assert error(broken, 200, -32603)["message"] == "Internal error"
    assert slow.json()["result"]["isError"] is True
    assert "timed out after 0.2 seconds" in slow.json()["result"]["content"][0]["text"]


@pytest.mark.django_db
@pytest.mark.parametrize("seconds", [5, 0.5])
def test_a_tool_timeout_cancels_the_tool_not_the_servers_request_task(site, seconds):
    """``TOOL_TIMEOUT`` cancels the ``async def`` tool on the loop, and only the tool: the
    ASGI server's task for the HTTP request is left uncancelled, so it sends the response
    and finishes normally. Also when the tool blocks the loop past the limit and returns
    (the timer's cancel then arrives after the tool is done)."""

    @site.tool
    async def async_block(seconds: float) -> str:
        """Block the event loop (a badly written tool), then return."""
        time.sleep(seconds)
        return "done"

    app = NativeMCP(get_asgi_application())
    cancels: list[int] = []

    async def server_task(scope: Any, receive: Any, send: Any) -> None:
        await app(scope, receive, send)
        await asyncio.sleep(0)  # a cancel scheduled from the timer thread lands here
        await asyncio.sleep(0)
        task = asyncio.current_task()
        assert task is not None
        cancels.append(task.cancelling())

    tool = "async_sleep" if seconds == 5 else "async_block"
    with override_mcp(TOOL_TIMEOUT=0.1):
        (response,) = exchange(server_task, call(tool, seconds=seconds))
    assert response.status_code == 200
    assert "timed out after 0.1 seconds" in response.json()["result"]["content"][0]["text"]
    assert cancels == [0]


# -- what only the native path does ----------------------------------------------------------


@pytest.mark.django_db
def test_the_native_path_skips_django_for_mcp_posts_and_forwards_the_rest(app: Any):
    """The project's middleware runs for every request Django serves, and for MCP POSTs on
    Django's path only: the native app answers them itself. Other URLs, and other methods
    on the MCP URL, reach Django unchanged."""
    served, elsewhere, get = exchange(
        app, call("add", a=1, b=2), {"method": "GET", "url": "/plain"}, {"method": "GET"}
    )
    native_path = isinstance(app, NativeMCP)
    assert (STAMP in served.headers) is not native_path
    assert elsewhere.status_code == 200
    assert elsewhere.json() == {"path": "/plain", "method": "GET"}
    assert elsewhere.headers[STAMP] == "ran"
    assert (get.status_code, get.headers[STAMP]) == (405, "ran")


def watch_connection_closes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The threads in which the native app closes old database connections, from now on."""
    closed: list[int] = []
    original = native.close_old_connections

    def spy() -> None:
        closed.append(threading.get_ident())
        original()

    monkeypatch.setattr(native, "close_old_connections", spy)
    return closed


@pytest.mark.django_db
def test_sync_tools_run_in_a_worker_thread_that_closes_its_connections(site, monkeypatch):
    """User code may use the ORM, which refuses to run on the event loop: a ``def`` tool
    runs in a worker thread, whose database connections are checked before and closed
    after the request there (as ``request_started``/``request_finished`` do)."""
    closed = watch_connection_closes(monkeypatch)
    loop_thread: list[int] = []

    async def on_loop(scope: Any, receive: Any, send: Any) -> None:
        loop_thread.append(threading.get_ident())
        await app(scope, receive, send)

    app = NativeMCP(get_asgi_application())
    (response,) = exchange(on_loop, call("add", a=1, b=2))
    assert response.status_code == 200
    (tool_thread,) = seen_threads
    assert tool_thread != loop_thread[0]
    assert closed == [tool_thread, tool_thread]


@pytest.mark.django_db(transaction=True)
def test_slow_sync_tools_do_not_stall_the_other_requests(site):
    """Sync code runs in django-mcp's own pool of ``NATIVE_WORKER_THREADS`` threads, not
    the event loop's default executor (``min(32, CPUs + 4)`` threads, 6 on two cores):
    with more slow ``def`` tools running than that, another request is still served."""
    release = threading.Event()
    running: list[int] = []
    held = (os.cpu_count() or 1) + 5  # one more than the default executor's threads

    @site.tool
    def wait_for_release() -> str:
        """Block until the test lets go (bounded)."""
        running.append(threading.get_ident())
        release.wait(HANG_GUARD_SECONDS)
        return "released"

    app = NativeMCP(get_asgi_application())

    async def run() -> tuple[httpx.Response, list[httpx.Response]]:
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            blocked = [
                asyncio.ensure_future(c.post("/mcp", **call("wait_for_release")))
                for _ in range(held)
            ]
            try:
                while len(running) < held:  # every slow call holds a thread now
                    await asyncio.sleep(0.01)
                listed = await asyncio.wait_for(
                    c.post("/mcp", **mcp("tools/list")), HANG_GUARD_SECONDS
                )
            finally:
                release.set()
            return listed, await asyncio.gather(*blocked)

    with override_mcp(NATIVE_WORKER_THREADS=held + 1):
        listed, slow = asyncio.run(run())
    assert listed.status_code == 200
    assert len(set(running)) == held
    assert [r.json()["result"]["content"][0]["text"] for r in slow] == ["released"] * held


@pytest.mark.django_db
def test_an_async_tool_runs_on_the_servers_event_loop(site):
    """``async def`` code is awaited on the server's own loop (no loop made per call)."""
    loop_thread: list[int] = []
    app = NativeMCP(get_asgi_application())

    async def on_loop(scope: Any, receive: Any, send: Any) -> None:
        loop_thread.append(threading.get_ident())
        await app(scope, receive, send)

    (response,) = exchange(on_loop, call("async_add", a=1, b=2))
    assert response.status_code == 200
    assert seen_threads == loop_thread


def count_worker_hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions the native app sends to a worker thread, from now on."""
    hops: list[str] = []
    original = native.in_worker

    async def in_worker(func: Any, *args: Any) -> Any:
        hops.append(getattr(func, "__name__", repr(func)))
        return await original(func, *args)

    monkeypatch.setattr(native, "in_worker", in_worker)
    return hops


@pytest.mark.django_db
def test_an_async_tool_on_an_ungated_site_takes_no_thread_at_all(site, monkeypatch):
    """Admission needs no database (anonymous, no permissions, no rate limit) and the tool
    is ``async def``: the whole request is served on the event loop. A ``def`` tool, or the
    same call streamed with progress, still goes through the view in a worker thread."""
    hops = count_worker_hops(monkeypatch)
    app = NativeMCP(get_asgi_application())
    streamed = mcp_body("tools/call", {"name": "async_add", "arguments": {"a": 1, "b": 2}})
    streamed["params"]["_meta"]["progressToken"] = "p"
    on_loop, sync, stream = exchange(
        app,
        call("async_add", a=1, b=2),
        call("add", a=1, b=2),
        {"content": json.dumps(streamed), "headers": mcp_headers(streamed)},
    )
    assert [r.status_code for r in (on_loop, sync, stream)] == [200, 200, 200]
    assert on_loop.json()["result"]["structuredContent"] == 3
    assert len(hops) == 2  # the def tool's call and the streamed call, not the first


@pytest.mark.django_db
def test_sync_code_awaited_on_the_loop_closes_its_connections(site, monkeypatch):
    """An async tool served on the loop that awaits sync code (the async ORM) gets one
    thread for the request, whose connections are closed in it at the end."""
    closed = watch_connection_closes(monkeypatch)
    app = NativeMCP(get_asgi_application())
    plain_call, with_sync_code = exchange(app, call("async_add", a=1, b=2), call("async_sync_code"))
    assert (plain_call.status_code, with_sync_code.status_code) == (200, 200)
    request_thread = seen_threads[-1]
    assert with_sync_code.json()["result"]["structuredContent"] == request_thread
    assert closed == [request_thread]


@pytest.mark.django_db
def test_the_mcp_path_is_resolved_once(site, monkeypatch):
    """Routing costs a dict lookup per request: the URLconf is asked once per path."""
    resolved: list[str] = []
    original = URLResolver.resolve

    def resolve(self: URLResolver, path: str) -> Any:
        if path.startswith("/"):  # the root resolver; it asks the included ones itself
            resolved.append(path)
        return original(self, path)

    monkeypatch.setattr(URLResolver, "resolve", resolve)
    app = NativeMCP(get_asgi_application())
    responses = exchange(app, *[call("add", a=1, b=2)] * 3)
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert resolved == ["/mcp"]


@pytest.mark.django_db
def test_a_failure_of_the_native_path_is_a_json_rpc_500_and_recorded(site, monkeypatch, caplog):
    """Never Django's HTML page and never a lost record: a bug in django-mcp itself is
    answered with a JSON-RPC internal error, logged, and recorded."""
    app = NativeMCP(get_asgi_application())

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(app, "admit", broken)
    reported: list[str] = []

    def on_exception(sender: Any, request: Any, **kwargs: Any) -> None:
        reported.append(request.path)

    signals.got_request_exception.connect(on_exception)
    try:
        with caplog.at_level("ERROR", logger="django.request"):
            (response,) = exchange(app, call("add", a=1, b=2))
    finally:
        signals.got_request_exception.disconnect(on_exception)
    error(response, 500, -32603)
    # Reported as Django reports an unhandled exception (mail_admins, error trackers).
    assert reported == ["/mcp"]
    [logged] = [r for r in caplog.records if r.name == "django.request"]
    assert logged.getMessage() == "Internal Server Error: /mcp"
    assert logged.exc_info is not None
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(500, -32603)]


@pytest.mark.django_db
def test_a_failure_to_record_never_costs_the_answer(site, monkeypatch, caplog):
    """The log is best-effort: if recording fails, the client still gets its answer and
    the failure is logged."""
    app = NativeMCP(get_asgi_application())

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(app, "record", broken)
    with caplog.at_level("ERROR", logger="django_mcp"):
        (response,) = exchange(app, call("add", a=1, b=2))
    assert response.json()["result"]["structuredContent"] == 3
    assert "could not record an exchange" in caplog.text


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("atomic_requests", [False, True])
@pytest.mark.parametrize("tool", ["how_routed", "async_how_routed"])
def test_a_tool_runs_as_django_runs_a_view(app: Any, monkeypatch, atomic_requests, tool):
    """What a view can rely on under Django's handler holds on both paths: the route
    (``request.resolver_match``), the URLconf of the request, and with
    ``ATOMIC_REQUESTS`` a transaction around the view, also for an ``async def`` tool
    (which then runs in a worker thread, inside the transaction, as Django's path runs
    the sync ``MCPView``)."""
    monkeypatch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", atomic_requests)
    (response,) = exchange(app, call(tool))
    assert response.json()["result"]["structuredContent"] == {
        "view_name": "test:endpoint",
        "urlconf": "tests.urls",
        "atomic": atomic_requests,
    }


@pytest.mark.django_db
def test_an_async_tool_on_the_loop_is_rendered_by_the_views_own_render(site, monkeypatch):
    """A project's ``MCPView`` subclass renders every reply, including an ``async def``
    tool's call served on the event loop with no thread: both paths answer the same."""
    from django_mcp.http.views import MCPView

    def render(self: MCPView, reply: Any) -> HttpResponse:
        response = original(self, reply)
        response["X-Rendered-By"] = type(self).__name__
        return response

    original = MCPView.render
    monkeypatch.setattr(MCPView, "render", render)
    hops = count_worker_hops(monkeypatch)
    (response,) = exchange(NativeMCP(get_asgi_application()), call("async_add", a=1, b=2))
    assert response.status_code == 200
    assert response.json()["result"]["structuredContent"] == 3
    assert response.headers["X-Rendered-By"] == "MCPView"
    assert hops == []  # it was the on-loop path
