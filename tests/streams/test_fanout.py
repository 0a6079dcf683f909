"""Two server processes sharing real Redis and PostgreSQL: a change committed through one
reaches a listen stream held by the other.

basic/patterns/subscriptions.mdx, with our choice where the spec leaves it open
(docs/deployment.md, "Several processes: Redis"): with several worker processes or
instances, fan change events out through shared infrastructure (e.g. Redis pub/sub or
Postgres LISTEN/NOTIFY) to whichever process holds each open stream. Here the Channels
layer is ``channels_redis`` (``testproject/settings_redis.py``) with a key prefix unique to
this run, and both processes use a PostgreSQL database made for this run (and dropped
after it), so no earlier run's tables can get in the way.
"""

from __future__ import annotations

import os
import socket
import uuid
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

import pytest

from tests.live import live_server, migrate

from .conftest import SETTINGS
from .remote import STREAMS, call, change, listening

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.live

SERVICES = {"Redis": ("127.0.0.1", 6379), "PostgreSQL": ("127.0.0.1", 5432)}


def require_services() -> None:
    """Skip (fail on CI) when Redis or PostgreSQL does not accept connections."""
    for name, address in SERVICES.items():
        try:
            socket.create_connection(address, timeout=1).close()
        except OSError:
            message = f"{name} is not reachable at {address[0]}:{address[1]}"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)


def forget_keys(prefix: str) -> None:
    """Delete what this run left in Redis (groups of streams cut by the shutdown)."""
    import redis

    client = redis.Redis(host=SERVICES["Redis"][0], port=SERVICES["Redis"][1])
    try:
        for key in client.scan_iter(match=prefix + "*"):
            client.delete(key)
    finally:
        client.close()


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for this run (its name), dropped afterwards."""
    import psycopg

    name = f"django_mcp_fanout_{uuid.uuid4().hex[:12]}"
    host, port = SERVICES["PostgreSQL"]
    admin = {"host": host, "port": port, "user": os.environ.get("PGUSER", "postgres")}
    with psycopg.connect(dbname="postgres", autocommit=True, **admin) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True, **admin) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_change_committed_through_one_process_reaches_a_listener_on_the_other(tmp_path: Path):
    """basic/patterns/subscriptions.mdx (fan-out through shared infrastructure, our choice:
    docs/deployment.md): a listener on process A (default site) receives ``tools/list_changed``
    for a tool re-registered through process B, and ``resources/updated`` for an Author row
    B commits (ModelTools ``resource_uri``); a listener on B receives a change published
    through A."""
    require_services()
    prefix = f"django_mcp_test_{uuid.uuid4().hex[:12]}"
    with ExitStack() as stack:
        database = stack.enter_context(fresh_database())
        env = {"DJANGO_MCP_REDIS_PREFIX": prefix, "PGDATABASE": database}
        migrate(SETTINGS, env)
        stack.callback(forget_keys, prefix)
        a = stack.enter_context(live_server(SETTINGS, tmp_path, env=env))
        b = stack.enter_context(live_server(SETTINGS, tmp_path, env=env))
        notifications = {"toolsListChanged": True, "resourceSubscriptions": ["authors://{id}"]}
        _, on_a = stack.enter_context(listening(a, notifications, path="/mcp"))
        _, on_b = stack.enter_context(listening(b, {"promptsListChanged": True}, id="on-b"))

        call(b, "test_trigger_tool_change", path="/mcp")
        assert change(on_a)["method"] == "notifications/tools/list_changed"

        author = call(b, "save_author", {"name": "Fan-out"})
        updated = change(on_a)
        while updated["method"] == "notifications/tools/list_changed":
            updated = change(on_a)  # the trigger unregisters and registers: two changes
        assert updated["method"] == "notifications/resources/updated"
        assert updated["params"]["uri"] == f"authors://{author}"

        call(a, "notify", {"kind": "prompts"}, path=STREAMS)
        assert change(on_b, "on-b")["method"] == "notifications/prompts/list_changed"
