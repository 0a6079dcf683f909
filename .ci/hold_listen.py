"""Hold N ``subscriptions/listen`` streams open against URL until stopped (SIGTERM).

    python .ci/hold_listen.py URL N

Used by .ci/conformance.sh: the conformance suite runs while these streams are open. Each
stream is one thread; a stream the server ends (its lifetime) is opened again, as a client
would. The streams come from their own loopback address (:data:`SOURCE_ADDRESS`), so they
are another caller: they take threads and the process's ``LISTEN_WSGI_STREAMS``, not the
suite's ``LISTEN_MAX_STREAMS_PER_CALLER``. The suite's Node client leaves some of its own
listen streams open (it stops reading without cancelling), so sharing one count of five
left it no margin: a tools stream opened before the server had noticed the suite's
previous, aborted stream was refused with 429, now and then.

Prints "holding N listen streams" once all are acknowledged, and exits 1 if a stream
cannot be opened (refused, or no acknowledgement within 10 s).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Any

import httpx

VERSION = "2026-07-28"
# The server writes a keep-alive every LISTEN_KEEPALIVE_SECONDS (15 s by default) while a
# stream is idle: a read timeout below that ends a healthy stream. Allow four of them, so a
# loaded machine that delays one keep-alive does not fail the run either.
READ_TIMEOUT_SECONDS = 60.0
#: The address the held streams connect from (any 127.0.0.0/8 address is loopback on Linux).
SOURCE_ADDRESS = "127.0.0.2"
stop = threading.Event()
acknowledged = threading.Semaphore(0)
failures: list[str] = []


def request(number: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": f"hold-{number}",
        "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": True, "resourcesListChanged": True},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }


def hold(url: str, number: int) -> None:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "subscriptions/listen",
    }
    first = True
    while not stop.is_set():
        try:
            with (
                httpx.Client(
                    timeout=httpx.Timeout(10.0, read=READ_TIMEOUT_SECONDS),
                    transport=httpx.HTTPTransport(local_address=SOURCE_ADDRESS),
                ) as client,
                client.stream(
                    "POST", url, content=json.dumps(request(number)), headers=headers
                ) as response,
            ):
                if response.status_code != 200:
                    raise RuntimeError(f"HTTP {response.status_code}: {response.read()!r}")
                for line in response.iter_lines():
                    if first and line.startswith("data:"):
                        first = False
                        acknowledged.release()
                    if stop.is_set():
                        return
        except Exception as exc:  # reported once, then the holder gives up
            failures.append(f"stream {number}: {exc}")
            acknowledged.release()
            return


def main() -> int:
    url, count = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threads = [threading.Thread(target=hold, args=(url, n), daemon=True) for n in range(count)]
    for thread in threads:
        thread.start()
    for _ in threads:
        if not acknowledged.acquire(timeout=15):
            failures.append("a stream was not acknowledged in time")
            break
    if failures:
        print("hold_listen: " + "; ".join(failures), file=sys.stderr, flush=True)
        return 1
    print(f"holding {count} listen streams", flush=True)
    while not stop.wait(1.0):
        if failures:
            print("hold_listen: " + "; ".join(failures), file=sys.stderr, flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
