"""Fixtures of the stream tests: the ``streams`` URLconf in-process, SSE-aware response
validation, and live Daphne/uvicorn servers (see :mod:`tests.live`).

The live servers run ``tests.streams.settings`` (listen keep-alives every 0.2 s) on a SQLite
copy of one migrated template, so they never share a database with the test process; they
are started once per session and always stopped.
"""

from __future__ import annotations

import json
import shutil
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest
from django.http import HttpResponse
from django.test import Client

from tests.helpers import validate_mcp_response
from tests.live import APPLICATION, NATIVE_APPLICATION, LiveServer, live_server, migrate

from . import sse

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.helpers import ExchangeLog, RequestInfo

SETTINGS = "tests.streams.settings"
KEEPALIVE_SECONDS = 0.2
UVICORN_LISTEN_MAX_SECONDS = 1.0


@pytest.fixture
def validate_exchange(mcp_log: ExchangeLog) -> Callable[[HttpResponse, RequestInfo], None]:
    """The suite's response validation (tests/conftest.py), extended to SSE responses.

    A buffered SSE response is read once, every notification in it is checked against its
    schema type and the final message like a JSON response; the body is put back so the
    test can read it. A ``subscriptions/listen`` stream never ends by itself, so its test
    reads and checks it.
    """

    def validate(response: HttpResponse, info: RequestInfo) -> None:
        if not response.get("Content-Type", "").startswith(sse.CONTENT_TYPE):
            mcp_log.exchanges.append(validate_mcp_response(response, info))
            return
        assert response.status_code == 200, response.status_code
        if info.method == "subscriptions/listen":
            return
        body = b"".join(response.streaming_content)
        response.streaming_content = [body]
        messages = sse.messages(body)
        assert messages, "an SSE response carries at least the final response"
        for note in messages[:-1]:
            assert "method" in note, f"only notifications precede the response: {note}"
            sse.check_message(note)
        final = HttpResponse(json.dumps(messages[-1]), content_type="application/json")
        mcp_log.exchanges.append(validate_mcp_response(final, info))

    return validate


@pytest.fixture
def streams_urls(settings: Any) -> None:
    """Serve the testproject at ``/mcp`` and the ``streams`` site at ``/streams/mcp``."""
    settings.ROOT_URLCONF = "tests.streams.urls"


# -- live servers ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def streams_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("streams")


@pytest.fixture(scope="session")
def sqlite_template(streams_workdir: Path) -> Path:
    """A migrated SQLite database, copied for each live server."""
    template = streams_workdir / "template.sqlite3"
    migrate(SETTINGS, {"DJANGO_MCP_SQLITE": str(template), "DJANGO_MCP_DB": "sqlite"})
    return template


@contextmanager
def serve_streams(
    kind: str,
    workdir: Path,
    template: Path,
    *,
    database: str = "",
    application: str = APPLICATION,
    **env: str,
) -> Iterator[LiveServer]:
    """``tests.streams.settings`` under ``kind`` on its own copy of ``template``
    (``workdir/<database or kind>.sqlite3``); ``env`` adds to the server's environment."""
    copy = workdir / f"{database or kind}.sqlite3"
    shutil.copyfile(template, copy)
    server_env = {
        "DJANGO_MCP_SQLITE": str(copy),
        "DJANGO_MCP_DB": "sqlite",  # the live servers use SQLite even in the PostgreSQL run
        "STREAMS_KEEPALIVE_SECONDS": str(KEEPALIVE_SECONDS),
        **env,
    }
    with live_server(
        SETTINGS, workdir, kind=kind, env=server_env, application=application
    ) as server:
        yield server


@pytest.fixture(scope="session")
def daphne(streams_workdir: Path, sqlite_template: Path) -> Iterator[LiveServer]:
    """``tests.streams.settings`` under Daphne."""
    with serve_streams("daphne", streams_workdir, sqlite_template) as server:
        yield server


@pytest.fixture(scope="session")
def uvicorn(streams_workdir: Path, sqlite_template: Path) -> Iterator[LiveServer]:
    """``tests.streams.settings`` under uvicorn, with listen streams limited to 1 s."""
    with serve_streams(
        "uvicorn",
        streams_workdir,
        sqlite_template,
        STREAMS_LISTEN_MAX_SECONDS=str(UVICORN_LISTEN_MAX_SECONDS),
    ) as server:
        yield server


@pytest.fixture(scope="session")
def native(streams_workdir: Path, sqlite_template: Path) -> Iterator[LiveServer]:
    """``tests.streams.settings`` through django-mcp's native ASGI path
    (``testproject.asgi_native``, :class:`~django_mcp.http.native.NativeMCP`) under uvicorn,
    with listen streams limited to 1 s."""
    with serve_streams(
        "uvicorn",
        streams_workdir,
        sqlite_template,
        database="native",
        application=NATIVE_APPLICATION,
        STREAMS_LISTEN_MAX_SECONDS=str(UVICORN_LISTEN_MAX_SECONDS),
    ) as server:
        yield server


@pytest.fixture(params=["daphne", "uvicorn", "native"])
def live(request: pytest.FixtureRequest) -> LiveServer:
    """Each ASGI server in turn, and the native ASGI path (under uvicorn)."""
    server: LiveServer = request.getfixturevalue(request.param)
    return server


# -- the in-process WSGI path -------------------------------------------------------------------


@pytest.fixture
def client() -> Client:
    """The test client as a threaded WSGI server's request (``wsgi.multithread``): a
    single-threaded worker refuses listen streams (django_mcp.listen.limits)."""
    return Client(**{"wsgi.multithread": True})


@pytest.fixture(autouse=True)
def _wsgi_listen(settings: Any) -> None:
    """The in-process stream tests run the WSGI path: let it hold a few listen streams."""
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "LISTEN_WSGI_STREAMS": 4}
