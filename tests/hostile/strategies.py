"""Hypothesis strategies for hostile MCP traffic: JSON-RPC messages, ``_meta``, headers,
tool arguments and client info, with NUL, lone surrogates, control and bidi characters,
huge strings and deep nesting kept within the server's limits (``MAX_REQUEST_BYTES``)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from tests.helpers import (
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    NAME_FIELDS,
    PROTOCOL_VERSION,
    VERSION_KEY,
    b64_sentinel,
)

#: Characters a database, a driver, a terminal or a reader may choke on.
SPECIALS = [
    "\x00", "\ud800", "\udfff", "\udc00x", "\u202e", "\u2066", "\x1b[2J", "\x7f", "\x85",
    "\ufeff", "\uffff", "\r\n", "\t", "=?base64?", "?=", "'; DROP TABLE x;--", "%00",
]  # fmt: skip

TOOLS = ["echo", "add", "nested", "regional", "no_such_tool"]
METHODS = [
    "tools/call", "tools/list", "resources/read", "resources/list",
    "resources/templates/list", "prompts/get", "prompts/list", "completion/complete",
    "server/discover", "ping", "initialize", "notifications/cancelled",
]  # fmt: skip

#: Any text, with the specials above mixed in (``characters()`` alone never draws a surrogate).
hostile_text = st.lists(st.one_of(st.characters(), st.sampled_from(SPECIALS)), max_size=12).map(
    "".join
)
#: Header values travel as Latin-1 text (WSGI), so only U+0000..U+00FF, or a sentinel.
header_text = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=0xFF), max_size=30),
    hostile_text.map(lambda text: header_value(text)),
    st.sampled_from(["=?base64?!!!?=", "=?base64??=", " padded ", ""]),
)
huge_text = st.sampled_from(["\x00", "\ud800", "a", "\u202e\x1b"]).flatmap(
    lambda unit: st.integers(10_000, 120_000).map(lambda n: unit * n)
)


def encodable(text: str) -> str:
    """``text`` with lone surrogates replaced: what a client can put in UTF-8 at all."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def header_value(text: str) -> str:
    """How a conforming client sends ``text`` in a header: plain ASCII, else a sentinel."""
    plain = text == text.strip(" \t") and all(0x20 <= ord(ch) <= 0x7E for ch in text)
    return text if plain and not text.startswith("=?base64?") else b64_sentinel(encodable(text))


def mirrored_headers(message: dict[str, Any]) -> dict[str, str]:
    """The headers a conforming client mirrors from ``message`` (Mcp-Param-Region too)."""
    headers = {"Accept": "application/json, text/event-stream"}
    params = message["params"]
    meta = params.get("_meta")
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    if isinstance(version, str):
        headers["MCP-Protocol-Version"] = header_value(version)
    headers["Mcp-Method"] = header_value(message["method"])
    field = NAME_FIELDS.get(message["method"])
    if field and isinstance(params.get(field), str):
        headers["Mcp-Name"] = header_value(params[field])
    arguments = params.get("arguments")
    if isinstance(arguments, dict) and isinstance(arguments.get("region"), str):
        headers["Mcp-Param-Region"] = header_value(arguments["region"])
    return headers


def _nest(depth: int, leaf: Any) -> Any:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k\x00": value}
    return value


deep_value = st.builds(_nest, st.integers(1, 150), hostile_text)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    hostile_text,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)
    ),
    max_leaves=15,
)
odd_ids = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    hostile_text,
    st.sampled_from([None, True, [], {}, "", "\ud800", "\x00"]),
)
client_info = st.one_of(
    st.fixed_dictionaries({"name": hostile_text, "version": hostile_text}),
    st.fixed_dictionaries({"name": huge_text.map(lambda t: t[:5000]), "version": hostile_text}),
    json_values,
)
request_meta = st.fixed_dictionaries(
    {
        VERSION_KEY: st.one_of(
            st.just(PROTOCOL_VERSION), st.sampled_from(["2099-01-01", "2025-06-18"]), hostile_text
        ),
        CAPABILITIES_KEY: st.one_of(st.just({}), json_values),
        CLIENT_INFO_KEY: client_info,
    },
    optional={"x.example/extra": json_values},
)
#: A ``_meta`` admission accepts, carrying hostile client info (what reaches the log).
admissible_meta = st.fixed_dictionaries(
    {
        VERSION_KEY: st.sampled_from([PROTOCOL_VERSION, PROTOCOL_VERSION, "2099-01-01"]),
        CAPABILITIES_KEY: st.just({}),
        CLIENT_INFO_KEY: st.fixed_dictionaries({"name": hostile_text, "version": hostile_text}),
    }
)


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Draw from each strategy with a relative weight (most examples should be admitted,
    so that hostile text reaches the handlers and the log, not only the refusals)."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


#: Arguments each tool of the suite's site accepts, made of hostile values.
ARGUMENTS: dict[str, st.SearchStrategy[Any]] = {
    "echo": st.fixed_dictionaries({"text": st.one_of(hostile_text, huge_text)}),
    "add": st.fixed_dictionaries({"a": st.integers(-(2**40), 2**40), "b": json_scalars}),
    "nested": st.fixed_dictionaries({"data": st.one_of(json_values, deep_value)}),
    "regional": st.fixed_dictionaries({"region": st.one_of(hostile_text, huge_text)}),
}


@st.composite
def params_for(draw: st.DrawFn, method: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if method == "tools/call":
        name = draw(weighted((5, st.sampled_from(TOOLS)), (1, hostile_text)))
        params["name"] = name
        params["arguments"] = draw(
            weighted((4, ARGUMENTS.get(name, json_values)), (1, json_values))
        )
    elif method == "resources/read":
        params["uri"] = draw(st.one_of(hostile_text.map("notes://".__add__), hostile_text))
    elif method == "prompts/get":
        params["name"] = draw(st.one_of(st.just("greet"), hostile_text))
        params["arguments"] = draw(st.dictionaries(hostile_text, hostile_text, max_size=3))
    elif method == "completion/complete":
        params["ref"] = {
            "type": "ref/prompt",
            "name": draw(st.one_of(st.just("greet"), hostile_text)),
        }
        params["argument"] = {"name": "name", "value": draw(hostile_text)}
    else:
        params.update(draw(st.dictionaries(hostile_text, json_values, max_size=2)))
    return params


@st.composite
def exchanges(draw: st.DrawFn) -> tuple[bytes, dict[str, str]]:
    """One POST: a JSON-RPC message as bytes, and the headers sent with it."""
    method = draw(
        weighted((4, st.just("tools/call")), (4, st.sampled_from(METHODS)), (1, hostile_text))
    )
    params = draw(params_for(method))
    if draw(st.integers(0, 9)) < 9:  # mostly present (0 is the simplest draw), at times missing
        params["_meta"] = draw(weighted((6, admissible_meta), (2, request_meta), (1, json_values)))
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if not method.startswith("notifications/") or draw(st.booleans()):
        message["id"] = draw(weighted((5, st.integers(0, 1000)), (2, odd_ids)))
    headers = mirrored_headers(message)
    for name in ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Param-Region", "Origin"):
        choice = draw(st.sampled_from(["keep"] * 8 + ["drop", "hostile"]))
        if choice == "drop":
            headers.pop(name, None)
        elif choice == "hostile":
            headers[name] = draw(
                st.one_of(
                    header_text,
                    st.sampled_from(
                        ["https://evil.example", "null", "http://localhost:1", "http://[::1"]
                    ),
                )
            )
    return json.dumps(message).encode(), headers


raw_bodies = st.one_of(
    st.binary(max_size=200),
    hostile_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
    json_values.map(lambda value: json.dumps(value).encode()),
    st.builds(lambda depth: ("[" * depth + "]" * depth).encode(), st.integers(1, 3000)),
)
