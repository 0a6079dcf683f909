"""Per-request ``params._meta`` (basic/index.mdx "_meta")."""

from __future__ import annotations

from typing import Any

import pytest

from django_mcp.protocol import errors
from django_mcp.protocol.meta import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    LOG_LEVELS,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
    ClientInfo,
    RequestMeta,
    complete_meta,
    required_meta,
)

VALID = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}}


def meta_error(params: Any) -> errors.MCPError:
    with pytest.raises(errors.MCPError) as info:
        required_meta(params)
    return info.value


def optional_error(**extra: Any) -> errors.MCPError:
    meta = {**VALID, **extra}
    with pytest.raises(errors.MCPError) as info:
        complete_meta("2026-07-28", {}, meta)
    return info.value


def test_required_meta_returns_version_capabilities_and_the_meta():
    version, capabilities, meta = required_meta({"_meta": VALID})
    assert (version, capabilities, meta) == ("2026-07-28", {}, VALID)


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"_meta": None},
        {"_meta": []},
        {"_meta": "x"},
        {"_meta": {CLIENT_CAPABILITIES_KEY: {}}},
        {"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}},
        {"_meta": {PROTOCOL_VERSION_KEY: 20260728, CLIENT_CAPABILITIES_KEY: {}}},
        {"_meta": {PROTOCOL_VERSION_KEY: None, CLIENT_CAPABILITIES_KEY: {}}},
        {"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: []}},
        {"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: None}},
    ],
)
def test_missing_or_mistyped_required_meta_is_invalid_request_meta(params):
    """basic/index.mdx "_meta": missing protocolVersion or clientCapabilities (or a missing
    _meta) makes the request malformed: -32602, and on HTTP 400."""
    error = meta_error(params)
    assert isinstance(error, errors.InvalidRequestMeta)
    assert error.code == errors.INVALID_PARAMS


def test_an_unknown_version_string_is_returned_unchecked_for_later_steps():
    """docs/errors.md, "Where each error comes from": the version is compared with the
    header (-32020) before its support is decided (-32022), so the _meta step must not judge
    it."""
    version, _, _ = required_meta(
        {"_meta": {PROTOCOL_VERSION_KEY: "v999.0.0", CLIENT_CAPABILITIES_KEY: {}}}
    )
    assert version == "v999.0.0"


def test_client_info_is_optional():
    """basic/index.mdx "_meta": clientInfo is a SHOULD; a request without it is served."""
    assert complete_meta("2026-07-28", {}, VALID).client_info is None


def test_client_info_is_parsed():
    info = {"name": "c", "version": "1", "title": "C"}
    meta = complete_meta("2026-07-28", {}, {**VALID, CLIENT_INFO_KEY: info})
    assert meta.client_info == ClientInfo("c", "1", "C")


@pytest.mark.parametrize(
    "info", ["x", [], {"name": "c"}, {"version": "1"}, {"name": 1, "version": "1"}]
)
def test_client_info_without_name_and_version_strings_is_invalid_params(info):
    """schema.json Implementation: ``name`` and ``version`` are required strings."""
    assert optional_error(**{CLIENT_INFO_KEY: info}).code == errors.INVALID_PARAMS


@pytest.mark.parametrize("level", LOG_LEVELS)
def test_every_logging_level_is_accepted(level):
    assert complete_meta("2026-07-28", {}, {**VALID, LOG_LEVEL_KEY: level}).log_level == level


@pytest.mark.parametrize("level", ["DEBUG", "verbose", 3, ""])
def test_an_unrecognised_log_level_is_invalid_params(level):
    """server/utilities/logging.mdx: an unrecognised logLevel value SHOULD be rejected with
    -32602."""
    assert optional_error(**{LOG_LEVEL_KEY: level}).code == errors.INVALID_PARAMS


@pytest.mark.parametrize("token", ["t", 0, 42, 1.0, -7.0])
def test_progress_tokens_are_strings_or_integers(token):
    """schema.json ProgressToken: string | integer, an integer as JSON Schema 2020-12 reads
    one (``1.0`` is one), kept as sent so the notifications echo it unchanged."""
    meta = complete_meta("2026-07-28", {}, {**VALID, PROGRESS_TOKEN_KEY: token})
    assert meta.progress_token == token
    assert type(meta.progress_token) is type(token)


@pytest.mark.parametrize("token", [1.5, 2.0**53, True, [], {}, None])
def test_other_progress_tokens_are_invalid_params(token):
    """schema.json ProgressToken: string | integer (null is neither)."""
    assert optional_error(**{PROGRESS_TOKEN_KEY: token}).code == errors.INVALID_PARAMS


@pytest.mark.parametrize("key", [CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROGRESS_TOKEN_KEY])
def test_an_optional_key_sent_as_null_is_invalid_not_absent(key):
    """schema.json RequestMetaObject: ``clientInfo`` is an ``Implementation``, ``logLevel``
    a ``LoggingLevel`` and ``progressToken`` a ``ProgressToken``; none admits null, and an
    optional key is optional by being left out. The message names the key."""
    error = optional_error(**{key: None})
    assert isinstance(error, errors.InvalidRequestMeta)
    assert error.code == errors.INVALID_PARAMS
    assert key in error.message


def test_unknown_meta_keys_are_ignored_and_trace_keys_are_kept():
    """basic/index.mdx: implementations MUST NOT make assumptions about reserved keys they do
    not understand; unknown keys are ignored. traceparent/tracestate/baggage are allowed."""
    meta = complete_meta(
        "2026-07-28",
        {},
        {
            **VALID,
            "io.modelcontextprotocol/future": {"x": 1},
            "com.example/anything": [1],
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "tracestate": 5,
        },
    )
    assert meta.trace == {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}


def test_has_capability_reads_only_the_declared_capabilities():
    """basic/index.mdx "Statelessness": capabilities come from this request only."""
    meta = RequestMeta("2026-07-28", {"elicitation": {"form": {}}, "roots": True})
    assert meta.has_capability("elicitation")
    assert meta.has_capability("elicitation", "form")
    assert not meta.has_capability("elicitation", "url")
    assert not meta.has_capability("sampling")
    assert not meta.has_capability("roots")
