"""Finding unpaired surrogates in params (django_mcp/protocol/unpaired.py), without Django.

basic/index.mdx: messages are UTF-8 JSON-RPC; a ``"\\ud800"`` escape parses to a string
UTF-8 cannot encode, which admission refuses in ``params`` (tests/http/test_unpaired_surrogates.py).
"""

from __future__ import annotations

import json

import pytest

from django_mcp.protocol.unpaired import may_hold_unpaired, unpaired_in_params


@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"uri": "x\udfff"}, "params.uri"),
        ({"a": [1, {"b": "ok", "c": ["\udc00"]}]}, "params.a[1].c[0]"),
        ({"\ud800": 1}, "params (a key)"),
        ({"a": {"k\ud800": 1}}, "params.a (a key)"),
        ({"a": "\U0001f600", "b": [None, 1.5, True]}, None),
        ({"_meta": {"x": "\ud800"}}, None),
    ],
)
def test_where_an_unpaired_surrogate_is(params, where):
    assert unpaired_in_params(params) == where


def test_a_deep_value_is_walked_without_recursion():
    """No ``MAX_JSON_DEPTH`` (None) lets a value nest as deep as the parser allows."""
    value: object = "\ud800"
    for _ in range(50_000):
        value = [value]
    assert unpaired_in_params({"a": value}) == ("params.a" + "[0]" * 50_000)[:256] + "..."


@pytest.mark.parametrize("text", [chr(0xD800), chr(0xDC00), "\U0001f600"])
def test_every_surrogate_escape_passes_the_byte_filter(text):
    """The filter must never skip a body that holds one (either case of hex digits)."""
    body = json.dumps({"v": text}).encode()
    assert may_hold_unpaired(body)
    assert may_hold_unpaired(body.replace(b"\\ud", b"\\uD").replace(b"\\ude", b"\\uDE"))
    assert json.loads(body.replace(b"\\ud", b"\\uD")) == {"v": text}


def test_a_body_without_the_escape_is_not_walked():
    assert not may_hold_unpaired(json.dumps({"v": "\u00e9 \\u plain"}, ensure_ascii=False).encode())


def test_a_wide_value_under_a_long_key_is_walked_without_copying_the_key():
    """The walk builds no path until it finds the match: 20,000 items under a 20,000-char
    key once cost 400 MB of path strings. The path in the message is shortened."""
    import tracemalloc

    key = "k" * 20_000
    params = {"arguments": {key: [0] * 20_000 + ["\ud800"]}}
    tracemalloc.start()
    try:
        where = unpaired_in_params(params)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert where == "params.arguments." + "k" * 64 + "...[20000]"
    assert peak < 20 * 2**20
