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

from django_mcp import Context
from django_mcp.sites import MCPSite
from tests.helpers import assert_error, input_required, mcp_post, request_meta, result_of

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
