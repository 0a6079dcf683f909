"""The native WSGI path (``NativeMCPWSGI``) answers exactly as Django's WSGI path does.

Every test here that takes ``app`` runs twice: through Django's WSGI handler (as
``testproject/wsgi.py`` serves it) and through ``NativeMCPWSGI`` (as
``testproject/wsgi_native.py`` serves it), in-process over httpx's WSGI transport, which
calls the application as a WSGI server does (``environ``, ``start_response``, iterating the
result, then ``close()``). The expectations are the same for both, so a difference in
status, JSON-RPC error code, headers or request-log row is a failure
(basic/transports/streamable-http.mdx, "Sending Messages to the Server"; the codes are
docs/errors.md's). The rest pins what only the native path does: it skips the project's
other middleware for MCP POSTs, forwards everything else to Django, and frames each request
with ``request_started``/``request_finished`` as Django's handler does.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import connections
from django.urls import path, register_converter, reverse, set_script_prefix

from django_mcp.auth.models import TOKEN_PREFIX
from django_mcp.http.native_wsgi import NativeMCPWSGI
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
    from collections.abc import Callable, Iterator

    from django_mcp.sites import MCPSite

pytestmark = pytest.mark.usefixtures("keep_the_test_database_connection")

APPS: dict[str, Callable[[], Any]] = {
    "django": get_wsgi_application,
    "native": lambda: NativeMCPWSGI(get_wsgi_application()),
}


@pytest.fixture
def site(mcp_site: MCPSite, settings: Any) -> MCPSite:
    @mcp_site.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @mcp_site.tool
    def count_to_three(ctx: Context) -> str:
        """Report progress 1, 2 and 3 (out of 3)."""
        for step in (1, 2, 3):
            ctx.report_progress(step, total=3)
        return "counted"

    @mcp_site.tool
    def where() -> str:
        """The URL of the plain view, as ``reverse`` gives it (with the script prefix)."""
        return reverse("plain")

    @mcp_site.tool
    def how_routed(ctx: Context) -> dict[str, Any]:
        """What Django's handler sets up for a view: the route, the URLconf, a transaction."""
        return routing_facts(ctx)

    @mcp_site.tool(task="required")
    def only_as_task() -> str:
        """Runs only as an MCP task."""
        return "never"

    test_urls.urlpatterns.append(path("plain", plain, name="plain"))
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "tests.http.native_support.StampMiddleware"]
    return mcp_site


@pytest.fixture(params=sorted(APPS))
def app(request: pytest.FixtureRequest, site: MCPSite) -> Any:
    return APPS[request.param]()


def client(app: Any, script_name: str = "") -> httpx.Client:
    transport = httpx.WSGITransport(app=app, remote_addr="127.0.0.1", script_name=script_name)
    return httpx.Client(transport=transport, base_url="http://testserver")


def exchange(app: Any, *requests: dict[str, Any]) -> list[httpx.Response]:
    """Send ``requests`` (httpx ``request`` keyword arguments) in order."""
    with client(app) as c:
        return [c.request(**{"method": "POST", "url": "/mcp", **r}) for r in requests]


@pytest.mark.django_db
def test_tools_call_is_answered_the_same_with_its_length(app: Any):
    """server/tools.mdx: a ``CallToolResult`` with the text and the structured content,
    with ``Content-Length`` on both paths (Django's adds it in ``CommonMiddleware``); an
    accepted notification is 202 with no body."""
    note = mcp_body("notifications/cancelled", {"requestId": 7}, id=OMIT)
    answered, accepted = exchange(
        app, call("add", a=1, b=2), {"content": json.dumps(note), "headers": mcp_headers(note)}
    )
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"] == "application/json"
    result = answered.json()["result"]
    assert (result["structuredContent"], result["resultType"]) == (3, "complete")
    assert answered.headers["content-length"] == str(len(answered.content))
    assert (accepted.status_code, accepted.content) == (202, b"")
    assert accepted.headers["content-length"] == "0"


@pytest.mark.django_db
def test_a_content_type_django_cannot_read_is_a_recorded_400(site: MCPSite):
    """A ``charset`` that names no codec at all (``charset*=utf-8''%00`` decodes to NUL,
    which ``codecs.lookup`` refuses with ``ValueError``) makes ``WSGIRequest`` raise. The
    native path answers 400 with -32600 and no id, and records it, instead of a traceback
    and the server's own 500 (basic/transports/streamable-http.mdx, "Sending Messages to
    the Server"). Django's own handler raises before any middleware runs."""
    request = mcp("tools/list")
    request["headers"]["Content-Type"] = "application/json; charset*=utf-8''%00"
    (response,) = exchange(NativeMCPWSGI(get_wsgi_application()), request)
    error(response, 400, -32600)
    assert "id" not in response.json()
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(400, -32600)]


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
    ``MAX_REQUEST_BYTES``, 401 for a bad bearer token (with ``WWW-Authenticate``)."""
    big = json.dumps(mcp_body("tools/call", {"name": "add", "arguments": {"x": "y" * 5000}}))
    with override_mcp(MAX_REQUEST_BYTES=4096):
        get, origin, too_large, token = exchange(
            app,
            {"method": "GET"},
            mcp("tools/list", Origin="https://evil.example"),
            {"content": big, "headers": {"Content-Type": "application/json"}},
            mcp("tools/list", Authorization=f"Bearer {TOKEN_PREFIX}not-issued"),
        )
    assert (get.status_code, get.headers["allow"]) == (405, "POST")
    error(origin, 403, -32600)
    error(too_large, 413, -32600)
    error(token, 401, -32600)
    assert token.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.django_db
def test_a_bad_host_is_400_before_a_bad_origin_is_403(app: Any):
    """With both wrong, the answer is the same on both paths: ``Host`` is checked first
    (as ``CommonMiddleware`` does on Django's path)."""
    (response,) = exchange(app, mcp("tools/list", Host="evil.example", Origin="https://evil"))
    assert response.status_code == 400


@pytest.mark.django_db
def test_a_host_outside_allowed_hosts_is_400(app: Any):
    """DNS rebinding (basic/transports/streamable-http.mdx, "Security Warning"): a ``Host``
    that ``ALLOWED_HOSTS`` refuses is a 400 on both paths, never a 500. With no
    ``CommonMiddleware`` in front, the native path checks it itself, and answers and
    records it with its JSON-RPC error."""
    (response,) = exchange(app, mcp("tools/list", Host="evil.example"))
    assert response.status_code == 400
    if isinstance(app, NativeMCPWSGI):
        assert response.json()["error"]["code"] == -32600
        recorder.flush()
        assert list(RequestLog.objects.values_list("http_status", "error_code")) == [(400, -32600)]


@pytest.mark.django_db
def test_every_exchange_is_recorded_the_same(app: Any):
    """One request-log row per request, with the same facts on both paths."""
    assert_every_exchange_recorded(exchange, app)


@pytest.mark.django_db
def test_progress_is_streamed_the_same(app: Any):
    """basic/utilities/progress.mdx over basic/transports/streamable-http.mdx: a request
    with a ``progressToken`` that accepts ``text/event-stream`` gets its progress
    notifications, then the result, as SSE events, on both paths (unpaced, so that all
    three of a quick tool's reports go)."""
    body = mcp_body("tools/call", {"name": "count_to_three", "arguments": {}})
    body["params"]["_meta"]["progressToken"] = "p"
    with override_mcp(PROGRESS_INTERVAL=0):
        (response,) = exchange(app, {"content": json.dumps(body), "headers": mcp_headers(body)})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [
        json.loads(line[len("data:") :])
        for line in response.text.splitlines()
        if line.startswith("data:") and line[len("data:") :].strip()
    ]
    progress = [e["params"]["progress"] for e in events if e.get("method", "").endswith("progress")]
    assert progress == [1, 2, 3]
    assert events[-1]["result"]["content"] == [{"type": "text", "text": "counted"}]


@pytest.mark.django_db
def test_a_script_prefix_is_routed_as_django_routes_it(app: Any):
    """Mounted under a ``SCRIPT_NAME`` (a WSGI server behind a path prefix), the MCP path
    is found in ``PATH_INFO``, as Django's resolver sees it, and ``reverse`` in a tool
    gives URLs with the prefix (the script prefix is set per request, as Django's handler
    sets it), as does the 401's protected-resource metadata URL."""
    set_script_prefix("/")  # what an earlier request in this thread left is not relied on
    with client(app, script_name="/prefix") as c:
        served = c.post("/mcp", **call("where"))
        refused = c.post("/mcp", **mcp("tools/list", Authorization=f"Bearer {TOKEN_PREFIX}no"))
    assert served.status_code == 200, served.text
    assert served.json()["result"]["content"][0]["text"] == "/prefix/plain"
    assert refused.status_code == 401
    assert "/prefix/" in refused.headers["www-authenticate"], refused.headers


# -- what only the native path does ----------------------------------------------------------


@pytest.mark.django_db
def test_the_native_path_skips_django_for_mcp_posts_and_forwards_the_rest(app: Any):
    """The project's middleware runs for every request Django serves, and for MCP POSTs on
    Django's path only: the native app answers them itself. Other URLs, and other methods
    on the MCP URL, reach Django unchanged."""
    served, elsewhere, get = exchange(
        app, call("add", a=1, b=2), {"method": "GET", "url": "/plain"}, {"method": "GET"}
    )
    assert (STAMP in served.headers) is not isinstance(app, NativeMCPWSGI)
    assert elsewhere.json() == {"path": "/plain", "method": "GET"}
    assert elsewhere.headers[STAMP] == "ran"
    assert (get.status_code, get.headers[STAMP]) == (405, "ran")


@pytest.fixture
def request_signals() -> Iterator[list[str]]:
    """``request_started`` and ``request_finished`` as they are sent, from now on."""
    sent: list[str] = []

    def started(sender: Any, **kwargs: Any) -> None:
        sent.append(f"started by {sender.__name__}")

    def finished(sender: Any, **kwargs: Any) -> None:
        sent.append(f"finished by {sender.__name__}")

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    yield sent
    signals.request_started.disconnect(started)
    signals.request_finished.disconnect(finished)


@pytest.mark.django_db
def test_each_request_is_framed_by_the_request_signals(site, request_signals):
    """``request_started`` before the request is read and ``request_finished`` when the
    server closes the response (they close stale database connections: Django's
    ``close_old_connections`` is connected to both), as for a request Django serves."""
    app = NativeMCPWSGI(get_wsgi_application())
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/mcp",
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "wsgi.url_scheme": "http",
        "REMOTE_ADDR": "127.0.0.1",
    }
    body = json.dumps(mcp_body("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}))
    environ["CONTENT_LENGTH"] = str(len(body))
    environ["CONTENT_TYPE"] = "application/json"
    for name, value in mcp_headers(json.loads(body)).items():
        key = name.upper().replace("-", "_")
        if key != "CONTENT_TYPE":
            environ[f"HTTP_{key}"] = value
    environ["wsgi.input"] = io.BytesIO(body.encode())
    statuses: list[str] = []
    result = app(environ, lambda status, headers: statuses.append(status))
    assert statuses == ["200 OK"]
    # Sent by Django's handler class, as for any request: receivers connected for it hear.
    assert request_signals == ["started by WSGIHandler"]  # the response is still open
    assert b"".join(result)
    result.close()  # type: ignore[attr-defined]
    assert request_signals == ["started by WSGIHandler", "finished by WSGIHandler"]


def broken(*args: Any, **kwargs: Any) -> None:
    raise RuntimeError("a bug")


@pytest.mark.django_db
def test_a_failure_of_django_mcp_itself_is_a_json_rpc_500_reported_and_recorded(
    site, monkeypatch, caplog
):
    """A bug in django-mcp on the native path still answers in the protocol's shape (a
    -32603 with status 500, never Django's HTML page), is recorded, and is reported as
    Django reports an unhandled exception: ``got_request_exception`` and an error on the
    ``django.request`` logger with the traceback (what ``mail_admins`` and error trackers
    hear)."""
    reported: list[Any] = []

    def on_exception(sender: Any, request: Any, **kwargs: Any) -> None:
        reported.append(request.path)

    app = NativeMCPWSGI(get_wsgi_application())
    monkeypatch.setattr(app, "admit", broken)
    signals.got_request_exception.connect(on_exception)
    try:
        with caplog.at_level("ERROR", logger="django.request"):
            (response,) = exchange(app, call("add", a=1, b=2))
    finally:
        signals.got_request_exception.disconnect(on_exception)
    error(response, 500, -32603)
    assert reported == ["/mcp"]
    [logged] = [r for r in caplog.records if r.name == "django.request"]
    assert logged.getMessage() == "Internal Server Error: /mcp"
    assert logged.exc_info is not None
    recorder.flush()
    assert list(RequestLog.objects.values_list("http_status", flat=True)) == [500]


@pytest.mark.django_db
def test_a_failure_to_record_never_costs_the_answer_or_the_request_end(
    site, monkeypatch, request_signals, caplog
):
    """The log is best-effort: if recording the exchange fails, the client still gets its
    answer, the failure is logged, and the server's ``close()`` still ends the request."""
    app = NativeMCPWSGI(get_wsgi_application())
    monkeypatch.setattr(app, "record", broken)
    with caplog.at_level("ERROR", logger="django_mcp"):
        (response,) = exchange(app, call("add", a=1, b=2))
    assert response.json()["result"]["structuredContent"] == 3
    assert "could not record an exchange" in caplog.text
    assert request_signals == ["started by WSGIHandler", "finished by WSGIHandler"]


class BrokenConverter:
    """A path converter of the project's that raises on some input (not a 404)."""

    regex = "[a-z]+"

    def to_python(self, value: str) -> str:
        raise KeyError(value)

    def to_url(self, value: str) -> str:
        return value


register_converter(BrokenConverter, "native_wsgi_broken")  # once: Django 6 refuses twice


@pytest.mark.django_db
def test_any_other_post_is_left_to_django_even_when_resolving_it_fails(app: Any):
    """The native path resolves a POST's path to see whether it is an MCP endpoint; when
    the project's URLconf fails on it (here a converter raises), the request goes to
    Django's handler, which answers it as it always does (a 500 page), instead of the
    exception escaping into the WSGI server."""
    test_urls.urlpatterns.append(path("things/<native_wsgi_broken:name>", plain))
    (response,) = exchange(app, {"url": "/things/abc"})
    assert response.status_code == 500
    assert response.headers["content-type"].startswith("text/html")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("atomic_requests", [False, True])
def test_a_tool_runs_as_django_runs_a_view(app: Any, monkeypatch, atomic_requests: bool):
    """What a view can rely on under Django's handler holds on both paths: the route
    (``request.resolver_match``), the URLconf of the request, and with
    ``ATOMIC_REQUESTS`` a transaction around the view."""
    monkeypatch.setitem(connections.settings["default"], "ATOMIC_REQUESTS", atomic_requests)
    (response,) = exchange(app, call("how_routed"))
    assert response.json()["result"]["structuredContent"] == {
        "view_name": "test:endpoint",
        "urlconf": "tests.urls",
        "atomic": atomic_requests,
    }
