"""The hot path's shortcuts answer exactly what the long way answers.

``normalise_environ`` reads headers from a WSGI environ instead of Django's header mapping,
and ``may_nest_deeper`` skips the depth walk of bodies with too few brackets to be too
deep: both must never change an outcome (basic/transports/streamable-http.mdx headers;
RFC 8259 nesting).
"""

from __future__ import annotations

import json
import sys

import pytest
from django.http.request import HttpHeaders
from hypothesis import given, settings
from hypothesis import strategies as st

from django_mcp.protocol import jsonrpc
from django_mcp.protocol.headers import normalise, normalise_environ
from django_mcp.protocol.leading_id import leading_id


def depth(value: object) -> int:
    """How deeply arrays and objects nest in ``value``: the plain recursive definition,
    the oracle :func:`jsonrpc.nests_deeper` must agree with."""
    if isinstance(value, dict):
        return 1 + max((depth(item) for item in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(item) for item in value), default=0)
    return 0


ENVIRON = {
    "REQUEST_METHOD": "POST",
    "CONTENT_TYPE": "application/json",
    "CONTENT_LENGTH": "12",
    "HTTP_MCP_PROTOCOL_VERSION": " 2026-07-28\t",
    "HTTP_MCP_METHOD": "tools/call",
    "HTTP_MCP_NAME": "add",
    "HTTP_MCP_PARAM_REGION": "eu-west",
    "HTTP_X_FORWARDED_FOR": "10.0.0.1",
    "wsgi.url_scheme": "http",
    "SERVER_NAME": "testserver",
}


def test_headers_from_the_environ_equal_the_normalised_django_headers():
    assert normalise_environ(ENVIRON) == normalise(HttpHeaders(ENVIRON))


@pytest.mark.parametrize(
    "name",
    [
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-param-region",
        "mcp-param-tenant_id",  # a name holding "_", which the environ folds into "-"
        "mcp-param-missing",
        "content-type",
        "content-length",
        "x-forwarded-for",
        "request-method",  # an environ key without HTTP_: not a header
        "server-name",
    ],
)
def test_each_lookup_answers_what_the_whole_normalised_mapping_answers(name):
    """Admission reads headers by name only; each lookup goes straight to the environ."""
    environ = {**ENVIRON, "HTTP_MCP_PARAM_TENANT_ID": " t-1 "}
    expected = normalise(HttpHeaders(environ))

    assert normalise_environ(environ).get(name) == expected.get(name.replace("_", "-"))


@pytest.mark.parametrize("levels", [0, 1, 3, 10, 11, 40])
def test_the_depth_limit_answers_the_same_with_the_bracket_count_shortcut(levels):
    document: object = "x"
    for level in range(levels):
        document = [document] if level % 2 else {"k": document}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"v": document}})
    too_deep = depth(json.loads(body)) > 10
    if too_deep:
        assert jsonrpc.may_nest_deeper(body.encode(), 10)
        with pytest.raises(jsonrpc.MessageError):
            jsonrpc.parse_message(body.encode(), max_depth=10)
    else:
        assert jsonrpc.parse_message(body.encode(), max_depth=10).method == "m"


def test_brackets_inside_strings_only_make_the_walk_run():
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"s": "[[[[{{{{"}})
    assert jsonrpc.may_nest_deeper(body.encode(), 4)
    assert jsonrpc.parse_message(body.encode(), max_depth=4).method == "m"


#: Strings that look like structure: brackets, quotes and backslashes escaped inside them.
TRICKY_TEXT = st.sampled_from(["[", "]", "{", "}", '"', "\\", '\\"[', "[]", "é{", ""])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY_TEXT | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(TRICKY_TEXT | st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(value=JSON_VALUES, max_depth=st.integers(0, 8), ascii_only=st.booleans())
def test_the_byte_level_depth_check_agrees_with_the_recursive_definition(
    value, max_depth, ascii_only
):
    """RFC 8259 nesting: brackets inside strings (escaped quotes and backslashes included)
    open nothing; arrays and objects mixed count alike."""
    body = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert jsonrpc.nests_deeper(body, max_depth) is (depth(value) > max_depth)


def test_a_body_of_a_million_empty_arrays_is_not_walked_value_by_value():
    """A shallow body of very many values (here 1,397,000 empty arrays, just under 4 MB)
    cost seconds of Python per request when the depth check walked the parsed values;
    it is worked out on the bytes now. Counted, not timed: the Python calls the check
    makes, which a walk (a generator step per value) would make by the million."""
    values = ",".join(["[]"] * 1_397_000)
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":[' + values + "]}}"
    ).encode()
    assert jsonrpc.may_nest_deeper(body, 64)
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        too_deep = jsonrpc.nests_deeper(body, 64)
    finally:
        sys.setprofile(None)
    assert too_deep is False
    assert calls < 100


ID_TEXTS = [
    b"1",
    b"1.0",
    b"-0.0",
    b"1e2",
    b"1.5",
    b"9007199254740991.0",
    b"9007199254740992.0",
    b"1e400",
    b'"x"',
    b"true",
    b"null",
]


def _read_id(body: bytes) -> tuple[str, object, type]:
    """What the full parse makes of ``body``'s id: the id kept (with its type), or the
    refusal (with the id it echoes)."""
    try:
        message = jsonrpc.parse_message(body)
    except jsonrpc.MessageError as exc:
        return ("refused", exc.request_id, type(exc.request_id))
    assert isinstance(message, jsonrpc.Request)
    return ("accepted", message.id, type(message.id))


@pytest.mark.parametrize("text", ID_TEXTS)
def test_every_reading_of_an_id_agrees(text):
    """schema.json RequestId (string | integer, ``1.0`` an integer in JSON Schema 2020-12):
    the decoder's shortcut for a document with no whitespace around it, its full path, and
    stdio's look at the beginning of an over-long line (:mod:`.leading_id`) read an id
    alike, value and type, and refuse alike (``1.5``, ``1e400``, ``true``, ``null``)."""
    compact = b'{"jsonrpc":"2.0","id":' + text + b',"method":"m","params":{}}'
    spaced = b" \n" + compact + b"\r\n"
    assert _read_id(compact) == _read_id(spaced)
    outcome, request_id, _ = _read_id(compact)
    looked = leading_id(compact[:-2])  # the line cut short inside its params
    if outcome == "accepted":
        assert (looked, type(looked)) == (request_id, type(request_id))
    else:
        assert looked is None
