"""The bound on the requests ``manage.py mcp_stdio`` holds, driven over pipes: the test
settings let 2 requests wait for the 8 workers (``STDIO_MAX_QUEUED_REQUESTS``)."""

from __future__ import annotations

import json
import signal
import threading
import time
from typing import Any

from tests.stdio.support import DEADLINE, request

RUNNING, WAITING = 8, 2
#: One more than fit: read, and held until there is room for it.
HELD = RUNNING + WAITING + 1
#: 16 notifications of 64 KiB: 1 MiB, far more than a pipe holds (64 KiB on Linux).
FILLER = 16


def send_more_than_fit(process: Any) -> None:
    """Wait until the process answers, then send HELD requests that each run for 3 s: 8
    run, 2 wait in the queue, and the last is read and held until there is room."""
    lines = process.lines()
    process.send(request(0, "server/discover"))
    assert next(lines)["id"] == 0  # the process is up and reading
    for request_id in range(1, HELD + 1):
        process.send(
            request(request_id, "tools/call", {"name": "pause", "arguments": {"seconds": 3}})
        )


def test_a_client_that_writes_faster_than_it_is_served_is_held_back_not_dropped(
    start: Any,
) -> None:
    """basic/transports/stdio.mdx: the server reads messages from its stdin, one per line.
    It read every line as it came and queued each request for a worker without bound, so a
    client writing requests faster than they were served grew the server's memory without
    limit. With 8 requests running and 2 waiting, the server now reads no more of stdin
    until one starts: the client's further writes block once the pipe is full (it is held
    back, as a pipe's writer is), and once the requests end everything written is read and
    every request is answered: none is dropped."""
    process = start()
    send_more_than_fit(process)
    pad = {"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"pad": "x" * 65536}}

    def write_more() -> None:
        for _ in range(FILLER):
            process.send(pad)

    writer = threading.Thread(target=write_more, daemon=True)
    writer.start()
    writer.join(1.5)  # the requests run for 3 s: none has ended yet
    held_back = writer.is_alive()
    writer.join(DEADLINE)  # the first ones end, room is made, the rest is read
    assert not writer.is_alive()
    rest, _ = process.finish()

    assert held_back, "the server read 1 MiB more while its queue was full"
    assert sorted(line["id"] for line in rest) == list(range(1, HELD + 1))
    assert {line["result"]["content"][0]["text"] for line in rest} == {"paused"}
    assert json.dumps(rest).count('"error"') == 0


def test_sigterm_while_a_request_waits_for_room_answers_it(start: Any) -> None:
    """basic/index.mdx: every request gets a response, with its id; basic/transports/
    stdio.mdx, "Shutdown": SIGTERM ends the input as closing stdin does, and what was read
    is still answered. With 8 requests running and 2 waiting, the request read next waits
    for room on the thread that reads stdin; SIGTERM raised its exception there, out of
    that wait: the request, read and known by its id, was never run nor answered, and
    the client waited for it for ever. It is now queued once there is room and answered
    like the others; nothing after it is read."""
    process = start()
    send_more_than_fit(process)
    time.sleep(1.5)  # every line is read: the last request waits for room
    process.popen.send_signal(signal.SIGTERM)
    rest, _ = process.finish()

    assert sorted(line["id"] for line in rest) == list(range(1, HELD + 1))
    assert {line["result"]["content"][0]["text"] for line in rest} == {"paused"}
