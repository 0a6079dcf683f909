"""The cross-worker check: a listen stream held by one worker hears a change made on another.

Several workers share one port, so the harness cannot choose which one serves a request;
it finds out instead. It opens a ``subscriptions/listen`` stream on the ``bench-fanout``
site (``testproject/benchapp/fanout.py``), subscribed to the template
``bench://changes/{tag}``, and learns which worker process holds it from ``/proc``: the
worker with the server end of the stream's TCP connection open. Then it calls the site's
``change(tag)`` tool over fresh connections, each with a new tag, until the tool's answer
(the pid of the worker that served it) names another worker, and reads the stream until
that tag's ``notifications/resources/updated`` arrives, or a deadline passes. Changes that
landed on the listener's own worker reach the stream too; they are told apart by tag.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import time
import urllib.request
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import procs
from bench.procs import Server
from bench.scenarios import Scenario

PATH = "/bench/fanout/mcp"
TEMPLATE = "bench://changes/{tag}"
UPDATED = "notifications/resources/updated"
#: Calls of ``change`` before giving up on reaching another worker (each lands on one of
#: two workers: the chance that 40 all land on the listener's is negligible unless the
#: other worker is not serving at all).
MAX_CALLS = 40
WAIT_SECONDS = 10.0
LISTEN = Scenario(
    "listen",
    PATH,
    "subscriptions/listen",
    {"notifications": {"resourceSubscriptions": [TEMPLATE]}},
    expect="notifications/subscriptions/acknowledged",
)
_ESTABLISHED = "01"


@dataclass(frozen=True)
class CrossWorker:
    """What the check saw: whose stream, whose change, and whether it arrived."""

    listener_pid: int | None
    publisher_pid: int | None
    calls: int  # calls of ``change`` until one landed on another worker
    delivered: bool
    latency_ms: float | None  # from sending the change to reading its notification
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def change_scenario(tag: str) -> Scenario:
    arguments = {"name": "change", "arguments": {"tag": tag}}
    return Scenario("change", PATH, "tools/call", arguments, "change", '"pid"')


def socket_inode(tcp_table: str, local_port: int, remote_port: int) -> int | None:
    """The inode of the established socket from ``local_port`` to ``remote_port`` in a
    ``/proc/net/tcp`` table (ports are hexadecimal there), or None."""
    for line in tcp_table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10 or fields[3] != _ESTABLISHED:
            continue
        local, remote = fields[1].rsplit(":", 1)[1], fields[2].rsplit(":", 1)[1]
        if int(local, 16) == local_port and int(remote, 16) == remote_port:
            return int(fields[9])
    return None


def socket_owner(pids: list[int], inode: int) -> int | None:
    """Which of ``pids`` has the socket ``inode`` open (a ``socket:[inode]`` descriptor)."""
    wanted = f"socket:[{inode}]"
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if fd.readlink().as_posix() == wanted:
                        return pid
    return None


def serving_pid(server: Server, client_port: int) -> int | None:
    """The pid of the worker holding the server end of our connection from ``client_port``."""
    inode = socket_inode(Path("/proc/net/tcp").read_text(), server.port, client_port)
    return None if inode is None else socket_owner(procs.group_pids(server.pgid), inode)


def sse_messages(lines: list[bytes]) -> list[dict[str, Any]]:
    """The JSON messages in complete SSE events (``data:`` lines; comments are skipped)."""
    messages, data = [], []
    for raw in lines:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            messages.append(json.loads("\n".join(data)))
            data = []
    return messages


def _change(server: Server, tag: str) -> int:
    """Call ``change(tag)`` over a new connection; the pid of the worker that served it."""
    scenario = change_scenario(tag)
    request = urllib.request.Request(
        server.base_url + PATH, scenario.body().encode(), scenario.headers(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    return int(answer["result"]["structuredContent"]["pid"])


def _change_elsewhere(server: Server, listener: int) -> tuple[str, int, int, float] | None:
    """Call ``change`` until another worker than ``listener`` serves it: its tag, that
    worker's pid, the number of calls and when that call was sent; None after ``MAX_CALLS``."""
    for calls in range(1, MAX_CALLS + 1):
        tag, sent = uuid.uuid4().hex[:12], time.monotonic()
        publisher = _change(server, tag)
        if publisher != listener:
            return tag, publisher, calls, sent
    return None


class _Stream:
    """One listen stream over ``http.client``, read event by event with a deadline."""

    def __init__(self, server: Server) -> None:
        self.connection = http.client.HTTPConnection(procs.HOST, server.port, timeout=30)
        self.connection.request("POST", PATH, LISTEN.body().encode(), LISTEN.headers())
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            raise RuntimeError(f"listen answered {self.response.status}: {self.response.read()!r}")
        assert self.connection.sock is not None
        self.client_port = int(self.connection.sock.getsockname()[1])
        self.pending: list[bytes] = []

    def next_message(self, deadline: float) -> dict[str, Any] | None:
        """The next message, or None when ``deadline`` passes first."""
        while time.monotonic() < deadline:
            assert self.connection.sock is not None
            self.connection.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                line = self.response.readline()
            except TimeoutError:
                return None
            if not line:
                return None  # the server ended the stream
            self.pending.append(line)
            if line.strip():
                continue
            messages = sse_messages(self.pending)
            self.pending = []
            if messages:
                return messages[0]
        return None

    def close(self) -> None:
        self.connection.close()


def check(server: Server) -> CrossWorker:
    """Run the check against ``server`` (uvicorn with two workers and the Redis layer)."""
    stream: _Stream | None = None
    try:
        stream = _Stream(server)
        ack = stream.next_message(time.monotonic() + WAIT_SECONDS)
        if ack is None or ack.get("method") != LISTEN.expect:
            return CrossWorker(None, None, 0, False, None, f"no acknowledgement: {ack}")
        listener = serving_pid(server, stream.client_port)
        if listener is None:
            return CrossWorker(None, None, 0, False, None, "no worker holds the listen stream")
        elsewhere = _change_elsewhere(server, listener)
        if elsewhere is None:
            detail = f"all {MAX_CALLS} changes landed on the listener's worker {listener}"
            return CrossWorker(listener, listener, MAX_CALLS, False, None, detail)
        tag, publisher, calls, sent = elsewhere
        uri, deadline = TEMPLATE.format(tag=tag), time.monotonic() + WAIT_SECONDS
        while (message := stream.next_message(deadline)) is not None:
            params = message.get("params") or {}
            if message.get("method") == UPDATED and params.get("uri") == uri:
                latency = round((time.monotonic() - sent) * 1000, 1)
                detail = f"{uri} reached the stream on pid {listener} (change {calls})"
                return CrossWorker(listener, publisher, calls, True, latency, detail)
        detail = f"{uri} did not reach the stream within {WAIT_SECONDS:.0f}s"
        return CrossWorker(listener, publisher, calls, False, None, detail)
    except (OSError, http.client.HTTPException, ValueError, KeyError) as error:
        return CrossWorker(None, None, 0, False, None, f"check failed: {error!r}")
    finally:
        if stream is not None:
            stream.close()
