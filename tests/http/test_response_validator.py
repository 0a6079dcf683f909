"""The suite's response validator (tests/helpers.py) itself: it must catch what it claims to.

Every other test relies on it through conftest, so a validator that accepts anything would
silently weaken the whole suite.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import HttpResponse

from tests.helpers import RequestInfo, validate_mcp_response

SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}


def response(message: Any, status: int = 200, **headers: str) -> HttpResponse:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    reply = HttpResponse(body, status=status, content_type="application/json")
    for name, value in headers.items():
        reply[name] = value
    return reply


def sent(
    method: str = "tools/list", request_id: Any = 1, *, notification: bool = False
) -> RequestInfo:
    document: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": {}}
    if not notification:
        document["id"] = request_id
    return RequestInfo.from_body("POST", json.dumps(document))


GOOD_LIST = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {
        "resultType": "complete",
        "tools": [],
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": SERVER_INFO,
    },
}


def test_a_good_list_result_passes():
    exchange = validate_mcp_response(response(GOOD_LIST), sent())
    assert exchange.message == GOOD_LIST


def test_a_good_error_passes():
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "m"}}
    assert validate_mcp_response(response(error, 400), sent()).error_code == -32020


def test_a_202_for_a_notification_passes():
    accepted = HttpResponse(status=202)
    del accepted["Content-Type"]
    assert validate_mcp_response(accepted, sent(notification=True)).status == 202


def test_an_empty_body_labelled_html_fails():
    """Django labels every ``HttpResponse`` ``text/html`` unless told otherwise; an empty
    202 carrying that label describes a body that is not there."""
    with pytest.raises(AssertionError):
        validate_mcp_response(HttpResponse(status=202), sent(notification=True))


def _with_result(**changes: Any) -> dict[str, Any]:
    message = json.loads(json.dumps(GOOD_LIST))
    for key, value in changes.items():
        if value is None:
            message["result"].pop(key)
        else:
            message["result"][key] = value
    return message


BAD: list[tuple[str, Any, int, RequestInfo]] = [
    ("5xx", GOOD_LIST, 500, sent()),
    ("missing resultType", _with_result(resultType=None), 200, sent()),
    ("missing ttlMs", _with_result(ttlMs=None), 200, sent()),
    ("float ttlMs", _with_result(ttlMs=1.5), 200, sent()),
    ("bad cacheScope", _with_result(cacheScope="shared"), 200, sent()),
    ("tools not a list", _with_result(tools={}), 200, sent()),
    ("wrong id", GOOD_LIST, 200, sent(request_id=2)),
    ("result for a notification", GOOD_LIST, 200, sent(notification=True)),
    ("result with 400", GOOD_LIST, 400, sent()),
    (
        "null id",
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "m"}},
        400,
        sent(request_id=None),
    ),
    (
        "invented code",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "m"}},
        400,
        sent(),
    ),
    (
        "spec-reserved code not defined",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32023, "message": "m"}},
        400,
        sent(),
    ),
    (
        "-32020 not 400",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": "m"}},
        200,
        sent(),
    ),
    (
        "-32601 not 404",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "m"}},
        400,
        sent(),
    ),
    (
        "-32022 without data",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "m"}},
        400,
        sent(),
    ),
    (
        "-32021 with an array",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32021, "message": "m", "data": {"requiredCapabilities": []}},
        },
        400,
        sent(),
    ),
    (
        "dropped id",
        {"jsonrpc": "2.0", "error": {"code": -32602, "message": "m"}},
        400,
        sent(),
    ),
    (
        "id on a notification error",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "m"}},
        400,
        sent(notification=True),
    ),
    ("not json", b"<html>", 400, sent()),
    ("wrong jsonrpc", {**GOOD_LIST, "jsonrpc": "1.0"}, 200, sent()),
]


@pytest.mark.parametrize(("label", "message", "status", "info"), BAD, ids=[b[0] for b in BAD])
def test_the_validator_catches(label, message, status, info):
    with pytest.raises(AssertionError):
        validate_mcp_response(response(message, status), info)


def test_a_202_with_a_body_is_caught():
    with pytest.raises(AssertionError):
        validate_mcp_response(response(b"{}", 202), sent(notification=True))


def test_a_405_without_allow_is_caught():
    with pytest.raises(AssertionError):
        validate_mcp_response(HttpResponse(status=405), RequestInfo("GET"))
