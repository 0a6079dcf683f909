"""The encoders built once (:mod:`django_mcp.protocol.jsontext`) write what ``json``
writes: the same text and the same exceptions for every option set they are built with."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from django_mcp.protocol import jsontext

OPTIONS: list[dict[str, Any]] = [
    {},
    {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False},
    {"separators": (",", ":"), "allow_nan": False},
    {"ensure_ascii": False, "separators": (",", ":")},
    {"ensure_ascii": False, "allow_nan": False},
    {"sort_keys": True, "separators": (",", ":")},
]

VALUES: list[Any] = [
    {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "3"}]}},
    {"b": [1, 2.5, 1e16, 1e-07, -0.0, 2**70, True, None], "a": {"é": "\u2028</script>\x1f"}},
    "top-level string \ud800 with a lone surrogate",
    3.25,
    [],
    {"z": 1, "a": (1, 2)},
]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("value", VALUES)
def test_the_text_is_what_json_writes(options: dict[str, Any], value: Any) -> None:
    assert jsontext.encoder(**options)(value) == json.JSONEncoder(**options).encode(value)


@pytest.mark.parametrize("options", OPTIONS)
def test_the_exceptions_are_what_json_raises(options: dict[str, Any]) -> None:
    encode = jsontext.encoder(**options)
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode({"a": object()})
    if options.get("allow_nan", True):
        assert encode([math.nan]) == json.JSONEncoder(**options).encode([math.nan])
    else:
        with pytest.raises(ValueError, match="not JSON compliant"):
            encode({"a": [math.inf]})


def test_an_encoder_can_be_used_again_after_a_failure() -> None:
    """No state survives a call (the circular-reference table json keeps is left out)."""
    encode = jsontext.encoder(allow_nan=False)
    shared = {"k": [1]}
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode([shared, math.nan])
    assert encode([shared, shared]) == '[{"k": [1]}, {"k": [1]}]'
