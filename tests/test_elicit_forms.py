"""An accepted elicitation's ``content`` must fill the form the server asked for.

basic/patterns/mrtr.mdx: the client answers each input request with the result of its
kind; client/elicitation.mdx: an accepted form's ``content`` follows ``requestedSchema``
(flat primitives: string, number, integer, boolean, with ``enum``). A hostile probe found
that only a pydantic form was checked: for a ``{name: type}`` form, ``content.name`` could be
an object, or missing, and reached the tool. Now -32602 names the field, in a synchronous
round and in ``tasks/update`` (ext-tasks ``tasks.md``, "Task Update Requests") alike.
"""

from __future__ import annotations

from typing import Any

import pytest

from django_mcp import Context
from django_mcp.protocol.errors import InvalidParams
from django_mcp.server.input_requests import Elicit, ElicitURL
from tests.conformance.test_conformance_fixtures import mrtr_round
from tests.helpers import assert_error, mcp_post, request_meta, result_of
from tests.tasks.support import get, run_worker, start, tasks_call

pytestmark = pytest.mark.django_db

NAME_FORM = "test_input_required_result_multi_round"  # asks {"name": str} under step1


@pytest.mark.parametrize(
    ("content", "field"),
    [({"name": {"x": 1}}, "name"), ({"name": 7}, "name"), ({}, "name")],
)
def test_a_synchronous_answer_that_does_not_fill_the_form_is_invalid_params(
    client: Any, content: dict[str, Any], field: str
) -> None:
    first = result_of(mrtr_round(client, NAME_FORM))
    answer = {"step1": {"action": "accept", "content": content}}
    error = assert_error(mrtr_round(client, NAME_FORM, answer, first["requestState"]), 200, -32602)
    assert error["message"].startswith(f"inputResponses.step1.content.{field} ")


def test_a_task_answer_that_does_not_fill_the_form_is_refused_and_the_task_waits(
    client: Any,
) -> None:
    task_id = start(client, "multi_input")["taskId"]  # asks {"name": str, "confirm": bool}
    run_worker()
    answer = {"action": "accept", "content": {"name": "n", "confirm": "yes"}}
    response = tasks_call(client, "tasks/update", task_id, inputResponses={"first": answer})
    error = assert_error(response, 200, -32602)
    assert error["message"] == "inputResponses.first.content.confirm does not match the form"
    assert set(get(client, task_id)["inputRequests"]) == {"first", "second"}


@pytest.mark.parametrize(
    "content",
    [
        {"age": 25, "score": 88, "status": "inactive", "ok": False, "extra": ["x"]},
        {"age": 25, "score": 88.5, "status": "active", "ok": True},
    ],
)
def test_a_json_schema_form_takes_what_fits(content: dict[str, Any]) -> None:
    """A number takes an integer; fields the form does not name are the handler's."""
    Elicit("?", FORM).parse("k", {"action": "accept", "content": content})


@pytest.mark.parametrize(
    "content",
    [
        {"age": 25.5, "score": 1, "status": "active", "ok": True},
        {"age": True, "score": 1, "status": "active", "ok": True},
        {"age": 1, "score": False, "status": "active", "ok": True},
        {"age": 1, "score": 1, "status": "gone", "ok": True},
        {"age": 1, "score": 1, "status": "active", "ok": 1},
        {"score": 1, "status": "active", "ok": True},
    ],
)
def test_a_json_schema_form_refuses_what_does_not(content: dict[str, Any]) -> None:
    with pytest.raises(InvalidParams, match=r"^inputResponses\.k\.content\."):
        Elicit("?", FORM).parse("k", {"action": "accept", "content": content})


RICH = {
    "type": "object",
    "properties": {
        "nullable": {"type": ["string", "null"]},
        "whole": {"type": "integer"},
        "typeless": {"enum": [1, 2]},
        "multi": {"type": "array", "items": {"enum": ["a", "b"]}},
        "titled": {"type": "string", "oneOf": [{"const": "x", "title": "X"}]},
        "listed": {"type": "array"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["whole", 5],  # a name that is no string is no field: ignored
}


@pytest.mark.parametrize(
    "content",
    [
        {"whole": 3.0},
        {"whole": 3, "nullable": None},
        {"whole": 3, "nullable": "s"},
        {"whole": 3, "titled": "x", "multi": ["b"], "typeless": 2},
        {"whole": 3, "tags": ["a", "b"], "listed": [1, {"x": 1}]},
    ],
)
def test_richer_forms_take_what_fits(content: dict[str, Any]) -> None:
    """Nullable types, a whole float as an integer, titled and multi-select choices."""
    Elicit("?", RICH).parse("k", {"action": "accept", "content": content})


@pytest.mark.parametrize(
    "content",
    [
        {"whole": 3.5},
        {"whole": 3, "nullable": 1},
        {"whole": 3, "typeless": True},  # True == 1, but not the same type
        {"whole": 3, "multi": ["a", "zzz"]},
        {"whole": 3, "titled": "zzz"},
        {"whole": 3, "listed": True},
        {"whole": 3, "tags": ["a", 1]},
        {"whole": 3, "tags": [{"x": 1}]},
        {"whole": 3, "multi": [["a"]]},
    ],
)
def test_richer_forms_refuse_what_does_not(content: dict[str, Any]) -> None:
    """client/elicitation.mdx, "Requested Schema": an array field's items follow its
    ``items`` schema, its ``type`` as well as its choices (a list of strings took
    objects)."""
    with pytest.raises(InvalidParams, match=r"^inputResponses\.k\.content\."):
        Elicit("?", RICH).parse("k", {"action": "accept", "content": content})


def test_a_declined_form_carries_no_content_to_check() -> None:
    assert Elicit("?", FORM).parse("k", {"action": "decline"}).action == "decline"


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_content_reaches_the_handler_only_with_an_accepted_form(action: str) -> None:
    """client/elicitation.mdx, "Response Actions" (and schema.json's ``ElicitResult``):
    ``content`` is present only when a form was accepted. A client that sent some with a
    decline, or with a URL-mode answer, handed the handler data the user never submitted."""
    sent = {"action": action, "content": {"name": "unsubmitted"}}
    assert Elicit("?", FORM).parse("k", sent).content is None
    accepted = {"action": "accept", "content": {"name": "x"}}
    assert ElicitURL("Open it", "https://example.com/x").parse("k", accepted).content is None
    assert ElicitURL("Open it", "https://example.com/x").parse("k", accepted).accepted


FORM = {
    "type": "object",
    "properties": {
        "age": {"type": "integer"},
        "score": {"type": "number"},
        "status": {"type": "string", "enum": ["active", "inactive"]},
        "ok": {"type": "boolean"},
    },
    "required": ["age", "status"],
}


def test_an_array_field_of_other_items_is_refused_over_http(client: Any, mcp_site: Any) -> None:
    """client/elicitation.mdx, "Requested Schema", through ``/mcp``: the tool never runs
    with a list of objects for a list of strings."""

    @mcp_site.tool
    def tag(ctx: Context) -> str:
        tags = {"type": "array", "items": {"type": "string"}}
        form = {"type": "object", "properties": {"tags": tags}, "required": ["tags"]}
        return " ".join(ctx.elicit("Tags?", form, key="tags").content["tags"])

    meta = request_meta(capabilities={"elicitation": {}})

    def answer(tags: Any) -> Any:
        given = {"tags": {"action": "accept", "content": {"tags": tags}}}
        params = {"name": "tag", "arguments": {}, "inputResponses": given}
        return mcp_post(client, "tools/call", params, meta=meta)

    error = assert_error(answer([{"x": 1}]), 200, -32602)
    assert error["message"] == "inputResponses.tags.content.tags does not match the form"
    assert result_of(answer(["a", "b"]))["content"][0]["text"] == "a b"


BOUNDED = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "age": {"type": "integer", "minimum": 18, "maximum": 120},
        "picks": {
            "type": "array",
            "items": {"enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
        },
    },
}


@pytest.mark.parametrize(
    "content",
    [
        {"name": "x"},
        {"name": "toolong"},
        {"age": 17},
        {"age": 121},
        {"picks": []},
        {"picks": ["a", "b", "c"]},
    ],
)
def test_a_field_outside_its_bounds_is_refused(content: dict[str, Any]) -> None:
    """client/elicitation.mdx, "Form Mode Security": servers SHOULD validate that received
    data matches the requested schema, whose primitives carry ``minLength``/``maxLength``,
    ``minimum``/``maximum`` and, for multi-select, ``minItems``/``maxItems``
    ("Requested Schema"). Only types and choices were checked: an age of 17 reached a tool
    that asked for 18 or more."""
    with pytest.raises(InvalidParams, match=r"^inputResponses\.k\.content\."):
        Elicit("?", BOUNDED).parse("k", {"action": "accept", "content": content})


def test_a_field_within_its_bounds_is_taken() -> None:
    content = {"name": "ab", "age": 120, "picks": ["a", "b"]}
    Elicit("?", BOUNDED).parse("k", {"action": "accept", "content": content})


def test_a_huge_integer_is_measured_without_overflow() -> None:
    """A JSON integer beyond any float is compared as it is, not turned into an error."""
    with pytest.raises(InvalidParams, match=r"^inputResponses\.k\.content\.age "):
        Elicit("?", BOUNDED).parse("k", {"action": "accept", "content": {"age": 10**400}})
