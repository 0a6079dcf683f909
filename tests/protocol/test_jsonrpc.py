"""JSON-RPC 2.0 framing as MCP 2026-07-28 restricts it (basic/index.mdx, "Messages")."""

from __future__ import annotations

import json
import math

import pytest

from django_mcp.protocol import errors, jsonrpc
from django_mcp.protocol.jsonrpc import MessageError, Notification, Request, parse_message


def raw(document: object) -> bytes:
    return json.dumps(document).encode()


def rejection(body: bytes) -> MessageError:
    with pytest.raises(MessageError) as info:
        parse_message(body)
    return info.value


@pytest.mark.parametrize("request_id", ["abc", "", 0, 7, -3, 2**63])
def test_string_and_integer_ids_are_accepted(request_id):
    """basic/index.mdx: "Requests MUST include a string or integer ID." """
    message = parse_message(raw({"jsonrpc": "2.0", "id": request_id, "method": "m"}))
    assert message == Request(id=request_id, method="m", params=None)


@pytest.mark.parametrize(
    "request_id", [None, True, False, 1.5, -0.5, 2.0**53, -(2.0**53), 1e300, [], {}]
)
def test_null_boolean_fractional_and_structured_ids_are_refused_without_echo(request_id):
    """basic/index.mdx: "Unlike base JSON-RPC, the ID MUST NOT be `null`." and the schema's
    RequestId is string | integer, so the id cannot be echoed back either. A number written
    with a fraction or an exponent beyond ±(2**53-1) may not be the integer that was sent
    (a double holds no more: RFC 7493, 2.2), so it is no id the server can echo either."""
    error = rejection(raw({"jsonrpc": "2.0", "id": request_id, "method": "m"}))
    assert error.error.code == errors.INVALID_REQUEST
    assert error.request_id is None
    assert error.is_notification is False


@pytest.mark.parametrize(
    ("text", "request_id"),
    [
        ("1.0", 1.0),
        ("-3.0", -3.0),
        ("0.0", 0.0),
        ("-0.0", -0.0),
        ("1e2", 100.0),
        ("2.50E1", 25.0),
        ("9007199254740991.0", 2.0**53 - 1),
    ],
)
def test_ids_written_with_a_zero_fraction_are_integers_and_kept_as_sent(text, request_id):
    """schema.json ``RequestId`` is ``string | integer``, and an integer in JSON Schema
    2020-12 (which the schema declares) is any number with a zero fractional part: ``1.0``
    is a valid request id. The response carries "the same value" (JSON-RPC 2.0, "Response
    object"), so it is kept as the float it was read as, and echoed as ``1.0``."""
    body = b'{"jsonrpc":"2.0","id":%s,"method":"m"}' % text.encode()
    message = parse_message(body)
    assert message == Request(id=request_id, method="m", params=None)
    assert type(message.id) is float
    echoed = jsonrpc.dumps(jsonrpc.result_response(message.id, {}))
    assert echoed == b'{"jsonrpc":"2.0","id":%s,"result":{}}' % repr(request_id).encode()
    assert type(json.loads(echoed)["id"]) is float


def test_an_id_in_a_malformed_request_is_echoed_in_the_form_it_was_sent():
    """basic/index.mdx, "Error Responses": an error carries the request's id when it could
    be read; ``1.0`` is one (schema.json RequestId, JSON Schema 2020-12 integer)."""
    error = rejection(b'{"jsonrpc":"1.0","id":7.0,"method":"m"}')
    assert error.error.code == errors.INVALID_REQUEST
    assert error.request_id == 7
    assert type(error.request_id) is float


def test_a_message_without_id_is_a_notification():
    """basic/index.mdx: "Notifications MUST NOT include an ID." """
    message = parse_message(raw({"jsonrpc": "2.0", "method": "notifications/x", "params": {}}))
    assert message == Notification(method="notifications/x", params={})


def test_a_batch_is_refused_as_an_invalid_request():
    """basic/transports/streamable-http.mdx: "The body of the HTTP POST MUST be a single
    JSON-RPC request or notification." """
    batch = raw([{"jsonrpc": "2.0", "id": 1, "method": "m"}])
    assert rejection(batch).error.code == errors.INVALID_REQUEST
    assert rejection(b"[]").error.code == errors.INVALID_REQUEST


@pytest.mark.parametrize(
    "document",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}},
    ],
)
def test_responses_from_the_client_are_refused_and_keep_their_id(document):
    """basic/transports/streamable-http.mdx: "The client MUST NOT send JSON-RPC responses." """
    error = rejection(raw(document))
    assert error.error.code == errors.INVALID_REQUEST
    assert error.request_id == 1
    assert error.is_notification is False
    assert error.is_response is True  # stdio writes nothing for it


def test_only_a_response_is_marked_as_one():
    """The mark stdio reads to leave a response unanswered is on nothing else."""
    assert rejection(raw({"jsonrpc": "2.0", "id": 1})).is_response is False
    assert rejection(raw({"jsonrpc": "2.0", "id": 1, "method": 3})).is_response is False


@pytest.mark.parametrize("version", ["1.0", "2", 2.0, None, "2.0 "])
def test_jsonrpc_must_be_exactly_the_string_2_0(version):
    """basic/index.mdx: all messages MUST follow JSON-RPC 2.0 (``"jsonrpc": "2.0"``)."""
    error = rejection(raw({"jsonrpc": version, "id": 9, "method": "m"}))
    assert error.error.code == errors.INVALID_REQUEST
    assert error.request_id == 9


def test_a_missing_jsonrpc_member_is_refused():
    """basic/index.mdx: every message carries ``jsonrpc: "2.0"``."""
    assert rejection(raw({"id": 1, "method": "m"})).error.code == errors.INVALID_REQUEST


@pytest.mark.parametrize("method", [None, "", 5, ["m"], {"m": 1}])
def test_method_must_be_a_non_empty_string(method):
    """basic/index.mdx, "Requests": ``method: string``."""
    error = rejection(raw({"jsonrpc": "2.0", "id": "a", "method": method}))
    assert error.error.code == errors.INVALID_REQUEST
    assert error.request_id == "a"


@pytest.mark.parametrize("params", [[], "x", 1, True])
def test_params_must_be_an_object(params):
    """basic/index.mdx, "Requests": ``params?: {[key: string]: unknown}``."""
    error = rejection(raw({"jsonrpc": "2.0", "id": 1, "method": "m", "params": params}))
    assert error.error.code == errors.INVALID_REQUEST


def test_a_malformed_notification_is_flagged_as_a_notification():
    """basic/transports/streamable-http.mdx: a notification the server cannot accept gets an
    HTTP error status; the transport must know it was a notification to send no id."""
    error = rejection(raw({"jsonrpc": "2.0", "method": "m", "params": []}))
    assert error.is_notification is True
    assert error.request_id is None


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b"not json",
        b'{"jsonrpc": "2.0", "id": 1, "method": "m",}',
        b"\xff\xfe{}",
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b'{"a": -Infinity}',
        "\ufeff{}".encode(),
        b"[" * 100_000,
        b"1" * 5000,
    ],
)
def test_bodies_that_are_not_strict_utf8_json_are_parse_errors(body):
    """basic/index.mdx: messages are JSON-RPC 2.0 (JSON text, UTF-8); NaN and Infinity are not
    JSON, and a nesting bomb must not crash the parser."""
    error = rejection(body)
    assert error.error.code == errors.PARSE_ERROR
    assert error.request_id is None


def test_numbers_that_overflow_to_infinity_are_parse_errors():
    """basic/index.mdx: messages are JSON; 1e400 would become a float infinity that no JSON
    text can carry back, so it is refused like ``Infinity``."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"x": 1e400}}'
    assert rejection(body).error.code == errors.PARSE_ERROR


@pytest.mark.parametrize("body", [b"1", b'"x"', b"null", b"true"])
def test_json_scalars_are_invalid_requests(body):
    """basic/index.mdx: a message is a JSON object."""
    assert rejection(body).error.code == errors.INVALID_REQUEST


def test_error_response_omits_an_unreadable_id_instead_of_sending_null():
    """basic/index.mdx, "Error Responses": the id may be absent when it could not be read;
    the schema's RequestId has no null."""
    response = jsonrpc.error_response(errors.ParseError(), None)
    assert response == {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}


def test_dumps_is_compact_utf8():
    assert jsonrpc.dumps({"a": "é"}) == '{"a":"é"}'.encode()


def test_dumps_always_produces_valid_utf8_json_even_with_lone_surrogates():
    """basic/index.mdx: messages are JSON-RPC in UTF-8. A lone surrogate (legal as a JSON
    escape on input) must not make the response unencodable."""
    text = jsonrpc.dumps({"id": "\ud800x"})
    assert json.loads(text.decode("utf-8")) == {"id": "\ud800x"}


def test_dumps_never_emits_nan_or_infinity():
    """basic/index.mdx: messages are JSON, which has no NaN or Infinity literals."""
    text = jsonrpc.dumps({"a": math.nan, "b": [math.inf, -math.inf], "c": 1.5})
    assert json.loads(text, parse_constant=lambda name: pytest.fail(name)) == {
        "a": None,
        "b": [None, None],
        "c": 1.5,
    }
