"""Validation reading the JSON text the argument-size check wrote (``call_encoded``):
the same outcome as validation encoding the arguments itself, case by case, and the text
is reused only when it is ASCII and holds no ``NaN`` or ``Infinity``."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from django_mcp.declarations.tools import ToolSpec
from django_mcp.exceptions import ToolError
from django_mcp.server.limits import LimitExceeded, check_argument_size
from tests.helpers import override_mcp


class Point(BaseModel):
    x: float
    y: float
    label: str = ""


def measure(
    name: str,
    size: float,
    count: int = 0,
    tags: list[str] | None = None,
    point: Point | None = None,
    extra: dict[str, Any] | None = None,
    flag: bool = False,
) -> dict[str, Any]:
    return {
        "name": name,
        "size": size,
        "count": count,
        "tags": tags,
        "point": point,
        "extra": extra,
        "flag": flag,
    }


NESTED = {"a": {"b": [1, 2.5, {"c": None, "d": [True, False, "x"]}]}, "e": []}

#: (arguments, whether the size check's text is reused)
CASES: list[tuple[dict[str, Any], bool]] = [
    ({"name": "a", "size": 1.5}, True),
    ({"name": "a", "size": 1e15, "count": 3}, True),
    ({"name": "a", "size": 1e16, "tags": ["x", "y"]}, True),
    ({"name": "a", "size": 1e-7, "point": {"x": 1e15, "y": -0.0, "label": "p"}}, True),
    ({"name": "a", "size": 0.1 + 0.2, "extra": NESTED}, True),
    ({"name": "a", "size": 10, "count": 10**30}, True),
    ({"name": 'quote " back \\ tab \t nl \n', "size": 2}, True),
    ({"name": "caf\u00e9 \u2615 \U0001f600", "size": 1.0}, False),
    ({"name": "a", "size": 1.0, "extra": {"cl\u00e9": "\u00e9t\u00e9"}}, False),
    ({"name": "lone \udc00 surrogate", "size": 1.0}, False),
    ({"name": "a", "size": math.nan}, False),
    ({"name": "a", "size": math.inf}, False),
    ({"name": "a", "size": -math.inf}, False),
    ({"name": "says NaN", "size": 1.0}, False),
    ({"name": "Infinity", "size": 1.0}, False),
    # Invalid ones: the same tool error, naming the same fields.
    ({"name": "a", "size": 1.0, "count": "3"}, True),
    ({"name": "a", "size": "big"}, True),
    ({"size": 1.0}, True),
    ({"name": "a", "size": 1.0, "unknown": {"deep": [1]}}, True),
    ({"name": "a", "size": 1.0, "point": {"x": "1", "y": 2}}, True),
    ({"name": "caf\u00e9", "size": 1.0, "count": 1.5}, False),
    ({"name": "a", "size": 1.0, "tags": ["x", 1]}, True),
]


def outcome(run: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", run())
    except ToolError as exc:
        return ("tool error", str(exc))


@pytest.fixture
def spec() -> ToolSpec:
    return ToolSpec.from_options(measure, {})


@pytest.mark.parametrize(("arguments", "reused"), CASES)
def test_reusing_the_size_checks_text_validates_as_encoding_again(
    spec: ToolSpec, arguments: dict[str, Any], reused: bool
) -> None:
    with override_mcp(MAX_TOOL_ARGUMENT_BYTES=1 << 20):
        encoded = check_argument_size(spec.name, arguments)

    assert (encoded is not None) is reused
    again = outcome(lambda: spec.call(arguments, None))
    reusing = outcome(lambda: spec.call_encoded(arguments, None, encoded))
    assert repr(reusing) == repr(again)  # by repr: NaN is not equal to itself
    if encoded is not None:  # the text itself validates as the arguments do
        text = outcome(lambda: spec._kwargs_from_json(encoded))
        assert repr(text) == repr(outcome(lambda: spec.kwargs_for(arguments)))


def test_the_text_is_the_arguments_as_json_without_blanks(spec: ToolSpec) -> None:
    arguments = {"name": "a", "size": 1e15, "extra": NESTED}
    with override_mcp(MAX_TOOL_ARGUMENT_BYTES=1 << 20):
        encoded = check_argument_size(spec.name, arguments)

    assert encoded == json.dumps(arguments, separators=(",", ":"))
    assert json.loads(encoded) == arguments


def test_no_text_without_a_size_limit(spec: ToolSpec) -> None:
    with override_mcp(MAX_TOOL_ARGUMENT_BYTES=None):
        assert check_argument_size(spec.name, {"name": "a", "size": 1.0}) is None


def test_a_body_under_the_limit_is_still_measured_as_encoded() -> None:
    """A decoded float can encode longer than its source (``1e15`` is written
    ``1000000000000000.0``): the size is that of the arguments as encoded, not of the
    body that carried them."""
    source = '{"value":[1e15,1e15,1e15]}'
    arguments = json.loads(source)
    too_large = pytest.raises(LimitExceeded, match=r"\(68 bytes")
    with override_mcp(MAX_TOOL_ARGUMENT_BYTES=40), too_large:
        check_argument_size("keep", arguments)
    assert len(source) < 40


def test_a_subclass_that_overrides_a_step_is_called_through_call() -> None:
    seen: list[Mapping[str, Any]] = []

    class Recording(ToolSpec):
        def kwargs_for(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
            seen.append(arguments)
            return super().kwargs_for(arguments)

    recording = Recording.from_options(measure, {})
    arguments = {"name": "a", "size": 1.0}

    assert recording.call_encoded(arguments, None, json.dumps(arguments)) == measure("a", 1.0)
    assert seen == [arguments]
    assert ToolSpec._own_steps
    assert not Recording._own_steps


def test_a_hand_written_schema_validates_the_arguments_themselves() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}

    def count(n: int) -> Any:
        return {"n": n}

    hand = ToolSpec.from_options(count, {"input_schema": schema})
    with pytest.raises(ToolError):
        hand.call_encoded({"n": "x"}, None, '{"n":1}')
    assert hand.call_encoded({"n": 2}, None, '{"n":1}') == {"n": 2}
