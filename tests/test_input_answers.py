"""Answers to input requests, attacked through ``/mcp``: whose fault a mismatch is, and
which shapes of answer a handler can be handed.

basic/patterns/mrtr.mdx: the client answers each input request with the result of its
kind (``InputResponses``: ``ElicitResult``, ``CreateMessageResult`` or ``ListRootsResult``);
"malformed data gets a JSON-RPC error". An answer the server already took, carried in its
own sealed ``requestState``, is no longer the client's to get wrong.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel

from django_mcp import Context
from django_mcp.sites import MCPSite
from tests.helpers import assert_error, input_required, mcp_post, request_meta, result_of
from tests.tasks.support import declaring, get, run_worker, tasks_call

pytestmark = pytest.mark.django_db

EVERYTHING = {"elicitation": {}, "sampling": {}, "roots": {}}
ADA = {"action": "accept", "content": {"name": "Ada"}}
BLUE = {"action": "accept", "content": {"color": "blue"}}


def call(client: Any, name: str, responses: Any = None, state: str | None = None) -> Any:
    """One round of tool ``name`` with no arguments, from a client that declares everything."""
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if responses is not None:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    return mcp_post(client, "tools/call", params, meta=request_meta(capabilities=EVERYTHING))


@pytest.fixture
def turncoat(mcp_site: MCPSite) -> str:
    """A tool that asks ``x`` as a form, then ``y``, then ``x`` again as a sampling
    request: a handler bug (docs/guides/input-requests.md: distinct keys for distinct
    questions)."""

    @mcp_site.tool
    def turncoat(ctx: Context) -> str:
        ctx.elicit("Name?", {"name": str}, key="x")
        ctx.elicit("Colour?", {"color": str}, key="y")
        return str(ctx.sample("Hi", key="x")["model"])

    return "turncoat"


def test_a_sealed_answer_the_handler_asks_again_as_another_kind_is_the_servers_error(
    client: Any, turncoat: str, caplog: pytest.LogCaptureFixture
) -> None:
    """basic/patterns/mrtr.mdx: the client answered ``x`` as asked, and the server sealed
    that answer into its ``requestState``; the handler then asking ``x`` as a sampling
    request is the server's mistake. It was -32602 "inputResponses.x must be a sampling
    result", blaming a client that sent no ``x`` in that round; now -32603, logged."""
    first = input_required(call(client, turncoat))
    second = input_required(call(client, turncoat, {"x": ADA}, first["requestState"]))
    assert set(second["inputRequests"]) == {"y"}

    with caplog.at_level(logging.ERROR, logger="django_mcp"):
        response = call(client, turncoat, {"y": BLUE}, second["requestState"])

    assert_error(response, 200, -32603)
    assert "'x'" in caplog.text


def test_an_answer_of_this_round_the_handler_asks_again_as_another_kind_is_the_servers_error(
    client: Any, turncoat: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The same within one round: ``x`` fitted the form the handler asked first, so its
    not fitting the handler's second question under the same key is not the client's
    error."""
    first = input_required(call(client, turncoat))

    with caplog.at_level(logging.ERROR, logger="django_mcp"):
        response = call(client, turncoat, {"x": ADA, "y": BLUE}, first["requestState"])

    assert_error(response, 200, -32603)
    assert "'x'" in caplog.text


def test_a_wrong_answer_to_a_question_asked_once_is_still_the_clients_error(
    client: Any, turncoat: str
) -> None:
    """An answer that does not fit the first question asked under its key stays -32602."""
    first = input_required(call(client, turncoat))
    sampled = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "t"}}

    response = call(client, turncoat, {"x": sampled}, first["requestState"])

    assert_error(response, 200, -32602)


def test_the_same_question_asked_twice_under_one_key_gets_the_one_answer(
    client: Any, mcp_site: MCPSite
) -> None:
    """Asking a key again with a question its answer fits is no mistake: the answer is
    handed out again."""

    @mcp_site.tool
    def twice(ctx: Context) -> str:
        one = ctx.elicit("Name?", {"name": str}, key="x").content
        two = ctx.elicit("Your name, again?", {"name": str}, key="x").content
        return f"{one} {two}"

    response = call(client, "twice", {"x": ADA})

    assert result_of(response)["content"][0]["text"] == "{'name': 'Ada'} {'name': 'Ada'}"


# -- sampling results (schema.json, CreateMessageResult) ---------------------------------------

PARIS = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "Paris."}}


def tool_result(*blocks: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "toolUseId": "1", "content": list(blocks), **extra}


@pytest.fixture
def sampler(mcp_site: MCPSite) -> str:
    @mcp_site.tool
    def sampler(ctx: Context) -> str:
        return str(ctx.sample("Capital of France?", key="q")["model"])

    return "sampler"


@pytest.mark.parametrize(
    "broken",
    [
        {"stopReason": 5},
        {"stopReason": None},
        {"content": tool_result(5)},
        {"content": tool_result("Paris.")},
        {"content": tool_result({"type": "nope"})},
        {"content": tool_result({"type": "text"})},
        {"content": tool_result({"type": "image", "data": "eA=="})},
        {"content": tool_result({"type": "resource_link", "uri": "file:///a"})},
        {"content": tool_result({"type": "resource", "resource": {"uri": "file:///a"}})},
        {"content": tool_result({"type": "resource", "resource": "file:///a"})},
        {"content": tool_result({"type": "resource", "resource": {"text": "x"}})},
        {"content": tool_result({"type": "tool_use", "id": "1", "name": "f", "input": {}})},
        {"content": tool_result(isError="yes")},
        {"content": [tool_result(), tool_result(7)]},
    ],
    ids=repr,
)
def test_a_sampling_result_with_a_mistyped_member_is_invalid_params(
    client: Any, sampler: str, broken: dict[str, Any]
) -> None:
    """schema.json, ``CreateMessageResult``: ``stopReason`` is a string (an open one:
    client/sampling.mdx lists standard values, others allowed); a ``ToolResultContent``'s
    ``content`` is an array of ``ContentBlock`` (text, image, audio, resource link or
    embedded resource, each with its required members) and its ``isError`` a boolean.
    Only the outer blocks were checked: ``stopReason: 5`` or a tool result holding ``[5]``
    reached the tool as the answer."""
    response = call(client, sampler, {"q": {**PARIS, **broken}})

    assert_error(response, 200, -32602)


@pytest.mark.parametrize(
    "fine",
    [
        {"stopReason": "endTurn"},
        {"stopReason": "provider-specific"},
        {
            "content": tool_result(
                {"type": "text", "text": "ok"},
                {"type": "image", "data": "eA==", "mimeType": "image/png"},
                {"type": "audio", "data": "eA==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a", "name": "a"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "x"}},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "eA=="}},
                isError=False,
            )
        },
    ],
    ids=repr,
)
def test_a_well_typed_sampling_result_is_an_answer(
    client: Any, sampler: str, fine: dict[str, Any]
) -> None:
    """The same checks take every shape schema.json allows."""
    response = call(client, sampler, {"q": {**PARIS, **fine}})

    assert result_of(response)["content"][0]["text"] == "m"


# -- elicitation content outside the form (schema.json, ElicitResult) ---------------------------


class Seat(BaseModel):
    row: int


@pytest.fixture
def forms(mcp_site: MCPSite) -> tuple[str, str]:
    """A tool with a ``{name: str}`` form and one with a pydantic form; each returns the
    accepted content as it got it."""

    @mcp_site.tool
    def plain_form(ctx: Context) -> str:
        return repr(ctx.elicit("Name?", {"name": str}, key="x").content)

    @mcp_site.tool
    def model_form(ctx: Context) -> str:
        return repr(ctx.elicit("Row?", Seat, key="x").content)

    return "plain_form", "model_form"


@pytest.mark.parametrize("extra", [{"q": 1}, [{"q": 1}], [1, 2], None, [[["deep"]]]], ids=repr)
@pytest.mark.parametrize("which", [0, 1], ids=["dict form", "pydantic form"])
def test_accepted_content_outside_the_form_must_still_be_form_values(
    client: Any, forms: tuple[str, str], extra: Any, which: int
) -> None:
    """schema.json, ``ElicitResult.content``: an object whose values are strings,
    numbers, booleans or arrays of strings (client/elicitation.mdx: the form is flat, "no
    nesting"); basic/patterns/mrtr.mdx: malformed data gets a JSON-RPC error. A field the
    form does not name is the handler's to use, but it was handed any JSON at all (an
    object, a nested list, null) in ``content``."""
    content = {"name": "Ada", "row": 3, "other": extra}

    response = call(client, forms[which], {"x": {"action": "accept", "content": content}})

    error = assert_error(response, 200, -32602)
    assert error["message"] == "inputResponses.x.content.other is not a form value"


def test_accepted_content_outside_the_form_of_form_values_reaches_the_handler(
    client: Any, forms: tuple[str, str]
) -> None:
    """Fields the form does not name stay the handler's to check, when they are values a
    form could hold."""
    content = {"name": "Ada", "row": 3, "a": "s", "b": 1.5, "c": True, "d": ["x", "y"]}

    for name in forms:
        response = call(client, name, {"x": {"action": "accept", "content": content}})
        assert result_of(response)["content"][0]["text"] == repr(content)


# -- answers asked before a task (ext-tasks; docs/guides/tasks.md, task_inputs) -------------------


@pytest.mark.parametrize(
    "override",
    [{"action": "accept", "content": {"name": "us"}}, 5, {"action": "maybe"}],
    ids=["another answer", "a number", "no action"],
)
def test_a_task_keeps_the_sealed_answer_to_a_question_asked_before_it(
    client: Any, mcp_site: MCPSite, override: Any
) -> None:
    """basic/patterns/mrtr.mdx and docs/guides/input-requests.md: an answer carried in the
    ``requestState`` is final while the state is used. For ``task_inputs`` the task was
    created with this round's raw ``inputResponses`` over the sealed answers: a retry
    could replace a taken answer with another one, or with one never checked at all (the
    task then failed on it in the worker)."""
    from django_mcp.server.input_requests import Elicit
    from tests.tasks.support import declaring, get, run_worker

    asks = {"region": Elicit("Region?", {"name": str}), "size": Elicit("Size?", {"n": int})}

    @mcp_site.tool(task="required", task_inputs=asks)
    def migrate(ctx: Context) -> str:
        answers = ctx.request_input(asks)
        return f"{answers['region'].content['name']} x{answers['size'].content['n']}"

    def round_(responses: Any = None, state: str | None = None) -> Any:
        params: dict[str, Any] = {"name": "migrate", "arguments": {}}
        if responses is not None:
            params["inputResponses"] = responses
        if state is not None:
            params["requestState"] = state
        return result_of(mcp_post(client, "tools/call", params, meta=declaring()))

    first = round_()
    eu = {"action": "accept", "content": {"name": "eu"}}
    second = round_({"region": eu}, first["requestState"])
    assert set(second["inputRequests"]) == {"size"}
    two = {"action": "accept", "content": {"n": 2}}

    created = round_({"region": override, "size": two}, second["requestState"])
    run_worker()

    assert get(client, created["taskId"])["result"]["content"][0]["text"] == "eu x2"


def test_two_asks_left_on_the_default_key_are_the_servers_error_even_when_the_answer_fits(
    client: Any, mcp_site: MCPSite, caplog: pytest.LogCaptureFixture
) -> None:
    """basic/patterns/mrtr.mdx: keys name the input requests, one answer per key.
    ``elicit`` and ``elicit_url`` both default to the key ``"elicitation"``: the form's
    bare ``accept`` also fits the URL question, so the handler silently got "accepted"
    for a URL the user was never sent to. A key asked again in one run with another
    question is now -32603, logged, naming the key."""

    @mcp_site.tool
    def two_defaults(ctx: Context) -> str:
        confirmed = ctx.elicit("Proceed?")
        signed_in = ctx.elicit_url("Sign in", "https://example.com/login")
        return f"{confirmed.action} {signed_in.action}"

    first = input_required(call(client, "two_defaults"))
    assert first["inputRequests"]["elicitation"]["params"].get("mode") is None

    with caplog.at_level(logging.ERROR, logger="django_mcp"):
        response = call(client, "two_defaults", {"elicitation": {"action": "accept"}}, None)

    assert_error(response, 200, -32603)
    assert "'elicitation'" in caplog.text
    assert "distinct key" in caplog.text


def test_another_form_under_one_key_is_the_servers_error_even_when_the_answer_fits(
    client: Any, mcp_site: MCPSite
) -> None:
    """Two forms under one key in one run: the answer to the first fits the second (its
    field is optional), but it was never the answer to the second."""

    @mcp_site.tool
    def two_forms(ctx: Context) -> str:
        name = ctx.elicit("Name?", {"name": str}, key="x")
        nick = ctx.elicit(
            "Nickname?",
            {"type": "object", "properties": {"name": {"type": "string"}}},
            key="x",
        )
        return f"{name.content} {nick.content}"

    response = call(client, "two_forms", {"x": ADA})

    assert_error(response, 200, -32603)


def test_two_asks_on_one_key_in_a_task_run_fail_the_task(
    client: Any, mcp_site: MCPSite, caplog: pytest.LogCaptureFixture
) -> None:
    """The same in a task's run (tasks.md: the answers come by ``tasks/update``): the run
    that resumes with the form's answer asks the URL under the same key and fails the task
    with -32603, logged; it completed with "accept accept" before."""

    @mcp_site.tool(task="required")
    def two_defaults(ctx: Context) -> str:
        confirmed = ctx.elicit("Proceed?")
        signed_in = ctx.elicit_url("Sign in", "https://example.com/login")
        return f"{confirmed.action} {signed_in.action}"

    params = {"name": "two_defaults", "arguments": {}}
    task_id = result_of(mcp_post(client, "tools/call", params, meta=declaring()))["taskId"]
    run_worker()
    assert set(get(client, task_id)["inputRequests"]) == {"elicitation"}
    answer = {"elicitation": {"action": "accept"}}
    result_of(tasks_call(client, "tasks/update", task_id, inputResponses=answer))

    with caplog.at_level(logging.ERROR, logger="django_mcp"):
        run_worker()

    task = get(client, task_id)
    assert task["status"] == "failed"
    assert task["error"]["code"] == -32603
    assert "distinct key" in caplog.text
