"""Request ids and progress tokens written with a zero fraction (``1.0``), over HTTP.

schema.json types ``RequestId`` (and ``ProgressToken``) as ``"type": ["string", "integer"]``,
and the schema is JSON Schema 2020-12, whose ``integer`` matches any number with a zero
fractional part: ``{"id": 1.0}`` is a valid ``JSONRPCRequest``. The server refused it with
-32600, taking Python's float for a fraction. JSON-RPC 2.0, "Response object": the id "MUST
be the same as the value of the id member in the Request Object", so it is echoed as sent,
``1.0`` (which is a valid ``RequestId`` in the response too). A fraction (``1.5``), a
number out of range (``1e400``) and a boolean are still refused as before.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from django_mcp.requestlog import recorder
from django_mcp.requestlog.models import RequestLog
from tests.helpers import (
    assert_error,
    assert_valid,
    call_tool,
    mcp_body,
    mcp_headers,
    mcp_post,
    post_raw,
    request_meta,
    result_of,
)
from tests.streams import sse

PROGRESS_TOOL = "test_tool_with_progress"  # testproject.conformance: progress 0, 50, 100


def raw_request(id_text: str, method: str = "server/discover") -> tuple[bytes, dict[str, str]]:
    """A request whose id is written exactly as ``id_text``, with its mirrored headers."""
    body = mcp_body(method, id="ID")
    text = json.dumps(body, separators=(",", ":")).replace('"id":"ID"', f'"id":{id_text}')
    return text.encode(), mcp_headers(body)


@pytest.mark.parametrize("id_text", ["1.0", "-7.0", "0.0", "1e2", "9007199254740991.0"])
def test_an_integer_id_written_with_a_fraction_is_served_and_echoed_as_sent(client, id_text):
    """schema.json ``RequestId``: string | integer, an integer in JSON Schema 2020-12 being
    any number with a zero fractional part; JSON-RPC 2.0: the response carries the same
    value, here in the same form (a float, ``1.0``, not ``1``)."""
    body, headers = raw_request(id_text)

    response = post_raw(client, body, headers)

    assert result_of(response)["resultType"] == "complete"
    echoed = response.json()["id"]
    assert echoed == float(id_text)
    assert type(echoed) is float
    assert f'"id":{float(id_text)!r},'.encode() in response.content
    assert_valid(response.json(), "JSONRPCResultResponse")


def test_an_error_answering_a_1_0_id_echoes_1_0(client):
    """basic/index.mdx, "Error Responses": an error carries the id of its request; an
    invalid ``logLevel`` (step 15 of docs/errors.md) is refused under the id ``1.0``."""
    meta = request_meta(**{"io.modelcontextprotocol/logLevel": "LOUD"})

    response = mcp_post(client, "server/discover", id=1.0, meta=meta)

    assert_error(response, 400, -32602)
    assert type(response.json()["id"]) is float
    assert b'"id":1.0,' in response.content


@pytest.mark.parametrize(
    ("id_text", "code"),
    [
        ("1.5", -32600),
        ("-0.25", -32600),
        ("1e-1", -32600),
        ("9007199254740993.0", -32600),  # read as ...992.0: not the id sent, so no echo
        ("1e300", -32600),
        ("true", -32600),
        ("null", -32600),
        ("1e400", -32700),  # no double holds it: not JSON this server can read back
        ("NaN", -32700),
    ],
)
def test_ids_that_are_no_integer_the_server_can_echo_are_still_refused(client, id_text, code):
    """schema.json ``RequestId``: a fraction, a boolean or null is none; basic/index.mdx:
    the id MUST NOT be null. Refused with no id in the answer (it could not be read)."""
    body, headers = raw_request(id_text)

    response = post_raw(client, body, headers)

    assert_error(response, 400, code)
    assert "id" not in response.json()


def test_progress_for_a_1_0_token_and_the_response_to_a_1_0_id_keep_their_form(client):
    """schema.json ``ProgressToken`` is typed as ``RequestId`` (string | integer, ``1.0``
    an integer): refused with -32602 before, it now opts in, and basic/patterns/progress.mdx
    has each notification carry the request's token (the same value, kept a float), on the
    request's own stream, whose final response carries the id ``1.0``."""
    response = call_tool(client, PROGRESS_TOOL, id=1.0, meta=request_meta(progressToken=1.0))

    assert response["Content-Type"] == "text/event-stream"
    raw = b"".join(response.streaming_content)
    *notes, final = sse.messages(raw)
    assert [type(note["params"]["progressToken"]) for note in notes] == [float] * 3
    assert {note["params"]["progressToken"] for note in notes} == {1.0}
    assert type(final["id"]) is float
    assert final["id"] == 1.0
    assert final["result"]["content"][0]["text"] == "1.0"
    assert raw.count(b'"progressToken":1.0,') == 3
    for note in notes:
        assert_valid(note, "ProgressNotification")
    assert_valid(final, "JSONRPCResultResponse")


@pytest.mark.django_db
def test_the_request_log_records_a_1_0_id_as_it_was_answered(client: Any):
    """The log's ``request_id`` column holds the id as the response carried it: ``1.0``
    (the same value as ``1``, sent and answered in another form)."""
    assert result_of(mcp_post(client, "tools/list", {}, id=1.0))
    assert result_of(mcp_post(client, "tools/list", {}, id=1))

    assert recorder.flush() == 2

    assert sorted(RequestLog.objects.values_list("request_id", flat=True)) == ["1", "1.0"]
