"""Request ids over stdio, where they are all that ties an answer or a cancellation to its
request (basic/transports/stdio.mdx): ``manage.py mcp_stdio`` driven over pipes."""

from __future__ import annotations

from typing import Any

import pytest

from django_mcp.stdio.inflight import DUPLICATE_ID
from tests.stdio.support import META, request

WAIT = {"name": "wait_for_cancel", "arguments": {}, "_meta": {**META, "progressToken": "w"}}
LISTEN = {"notifications": {"toolsListChanged": True}}


def cancel(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id},
    }


def test_a_second_request_under_an_id_in_flight_is_refused_and_the_first_stays_cancellable(
    start: Any,
) -> None:
    """basic/index.mdx, "Requests": the id "MUST NOT match the ID of any other request the
    sender has issued and not yet received a response for". A second request under id 1
    took over id 1's cancellation tracking: it ran and was answered as if valid, and
    ``notifications/cancelled`` for 1 then reached the wrong request (the first ran on).
    The duplicate now gets -32600 Invalid Request with its id (every request gets a
    response) and never runs; the cancellation reaches the first, which is never
    answered (basic/patterns/cancellation.mdx)."""
    process = start()
    lines = process.lines()
    process.send(request(1, "tools/call", WAIT))
    assert next(lines)["method"] == "notifications/progress"  # the first one runs
    process.send(request(1, "tools/call", {"name": "caller", "arguments": {}}))
    refused = next(lines)
    process.send(cancel(1))
    process.send(request(2, "server/discover"))
    answered = next(lines)
    rest, _ = process.finish()  # the first request, were it not cancelled, waits 30 s

    assert refused == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32600, "message": DUPLICATE_ID},
    }
    assert answered["id"] == 2
    assert "result" in answered
    assert rest == []


def test_an_id_in_use_by_a_listen_stream_is_refused_too(start: Any) -> None:
    """basic/patterns/subscriptions.mdx: a ``subscriptions/listen`` request is in flight
    until its stream ends, and its id is the one its notifications and its cancellation
    name: another request under it is refused, and the stream is still the one that
    ``notifications/cancelled`` ends."""
    process = start()
    lines = process.lines()
    process.send(request(5, "subscriptions/listen", LISTEN))
    assert next(lines)["method"] == "notifications/subscriptions/acknowledged"
    process.send(request(5, "server/discover"))
    refused = next(lines)
    process.send(cancel(5))
    rest, _ = process.finish()  # a stream still open would end with its result

    assert refused["id"] == 5
    assert refused["error"]["code"] == -32600
    assert rest == []


def test_an_id_is_free_again_once_its_request_is_cancelled_or_answered(start: Any) -> None:
    """basic/index.mdx: the id is reserved only until its response is received, and a
    cancelled request gets none (basic/patterns/cancellation.mdx): the client may reuse the
    id as soon as it reads the response or sends the cancellation, even while the
    cancelled request winds down. Neither reuse is taken for a duplicate."""
    process = start()
    lines = process.lines()
    process.send(request(1, "tools/call", WAIT))
    assert next(lines)["method"] == "notifications/progress"
    process.send(cancel(1))
    process.send(request(1, "tools/call", {"name": "caller", "arguments": {}}))
    reused = next(lines)
    process.send(request(1, "tools/call", {"name": "caller", "arguments": {}}))
    again = next(lines)
    rest, _ = process.finish()

    assert reused["id"] == 1
    assert reused["result"]["content"][0]["text"] == "anonymous"
    assert again["id"] == 1
    assert again["result"]["content"][0]["text"] == "anonymous"
    assert rest == []


def test_a_response_from_the_client_is_never_answered(start: Any) -> None:
    """basic/transports/stdio.mdx: "The client MUST NOT write JSON-RPC responses", and
    what the server writes is responses to the client's requests, correlated by id, and
    notifications. A response the client wrote anyway got -32600 echoing its id: the id of
    a request of the server's (which sends none), read by the client as the answer to its
    own request 1, still running here (basic/index.mdx: an error response carries the id
    of the request it corresponds to). It is now logged to stderr and answers nothing;
    request 1 is unaffected. (Over HTTP the same body still gets 400 and -32600:
    tests/protocol/test_error_codes.py.)"""
    stderr = _responses_sent_while_request_1_runs(
        start,
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}},
        {"jsonrpc": "2.0", "result": {}},  # no id at all
    )
    assert stderr.count("a JSON-RPC response (id 1) was read from stdin") == 2


def _responses_sent_while_request_1_runs(start: Any, *responses: dict[str, Any] | bytes) -> str:
    """Send ``responses`` while request 1 runs, then request 2; assert that only request 2
    was answered (nothing under id 1, nothing else), and return stderr."""
    process = start()
    lines = process.lines()
    process.send(request(1, "tools/call", WAIT))
    assert next(lines)["method"] == "notifications/progress"
    for response in responses:
        process.send(response)
    process.send(request(2, "server/discover"))
    answered = next(lines)
    process.send(cancel(1))
    rest, stderr = process.finish()

    assert answered["id"] == 2
    assert "result" in answered
    assert rest == []
    return str(stderr)


def test_a_malformed_response_from_the_client_is_never_answered_either(start: Any) -> None:
    """basic/transports/stdio.mdx: the client MUST NOT write JSON-RPC responses; one it
    writes anyway is logged and never answered (above), since its id names a request of
    the server's, not of the client's (basic/index.mdx: an error response carries the id
    of the request it corresponds to). A response that was also malformed (a wrong
    ``jsonrpc``, none at all, or nested deeper than the limit) was checked for that first
    and got -32600 echoing its id, which the client read as the answer to its own request
    1, still running here."""
    deep = "[" * 100 + "]" * 100
    stderr = _responses_sent_while_request_1_runs(
        start,
        {"jsonrpc": "1.0", "id": 1, "result": {"resultType": "complete"}},
        {"id": 1, "error": {"code": -32603, "message": "x"}},
        f'{{"jsonrpc":"2.0","id":1,"result":{{"x":{deep}}}}}'.encode(),
    )
    assert stderr.count("a JSON-RPC response (id 1) was read from stdin") == 3


@pytest.mark.parametrize(("sent_as", "named_as"), [(1.0, 1), (1, 1.0)])
def test_an_id_written_as_1_0_is_answered_as_sent_and_is_the_id_1_in_flight(
    start: Any, sent_as: Any, named_as: Any
) -> None:
    """schema.json RequestId: string | integer, an integer in JSON Schema 2020-12 being any
    number with a zero fractional part, so ``1.0`` is an id (it was refused with -32600, and
    without an id: on stdio, an answer to nobody). JSON-RPC 2.0: the response carries the
    same value, echoed as sent. ``1.0`` and ``1`` are that same value: a request under one
    while the other is in flight is a duplicate (basic/index.mdx, "Requests"), and
    ``notifications/cancelled`` naming either cancels it (basic/patterns/cancellation.mdx)."""
    process = start()
    lines = process.lines()
    process.send(request(sent_as, "tools/call", WAIT))
    assert next(lines)["method"] == "notifications/progress"  # it runs under 1.0 (or 1)
    process.send(request(named_as, "tools/call", {"name": "caller", "arguments": {}}))
    refused = next(lines)
    process.send(cancel(named_as))
    process.send(request(2.0, "server/discover"))
    answered = next(lines)
    rest, _ = process.finish()  # the first request, were it not cancelled, waits 30 s

    assert refused["error"] == {"code": -32600, "message": DUPLICATE_ID}
    assert (refused["id"], type(refused["id"])) == (named_as, type(named_as))
    assert (answered["id"], type(answered["id"])) == (2.0, float)
    assert "result" in answered
    assert rest == []
