"""Multi round-trip requests over HTTP: every path and every attack on ``requestState``.

basic/patterns/mrtr.mdx: only ``tools/call``, ``prompts/get`` and ``resources/read`` may
return ``InputRequiredResult``; the client retries the original request with a new JSON-RPC
id, adding ``inputResponses`` and the echoed ``requestState``; the server must treat
``requestState`` as "an attacker-controlled input", protect its integrity and "reject state
that fails verification", binding the authenticated principal, a short expiry and the
originating request.

The tools are testproject.conformance's (default site, ``/mcp``) and the ``streams`` site's
(``/streams/mcp``); every response is validated against schema.json by the conftest.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import pytest
from django.test import Client

from django_mcp import Context
from django_mcp.server import sealing
from django_mcp.server.input_requests import Elicit, ElicitURL
from tests.helpers import (
    assert_error,
    input_required,
    mcp_post,
    override_mcp,
    request_meta,
    result_of,
)

from . import remote

if TYPE_CHECKING:
    from tests.live import LiveServer

pytestmark = pytest.mark.usefixtures("streams_urls")

FORM = {"elicitation": {}}
EVERYTHING = {"elicitation": {}, "sampling": {}, "roots": {}}
UNSET: Any = object()
ADA = {"action": "accept", "content": {"name": "Ada"}}
STREAMS = "/streams/mcp"
URL = "https://example.com/connect"


def ask(
    client: Client,
    method: str,
    target: str,
    arguments: dict[str, Any] | None = None,
    *,
    responses: Any = UNSET,
    state: Any = UNSET,
    capabilities: dict[str, Any] | None = None,
    path: str = "/mcp",
    id: Any = 1,
) -> Any:
    """One attempt of an MRTR-capable request; ``responses``/``state`` make it a retry."""
    params: dict[str, Any] = {"uri": target} if method == "resources/read" else {"name": target}
    if arguments is not None:
        params["arguments"] = arguments
    if responses is not UNSET:
        params["inputResponses"] = responses
    if state is not UNSET:
        params["requestState"] = state
    meta = request_meta(capabilities=FORM if capabilities is None else capabilities)
    return mcp_post(client, method, params, id=id, meta=meta, path=path)


def tool(client: Client, name: str, arguments: dict[str, Any] | None = None, **kw: Any) -> Any:
    return ask(client, "tools/call", name, arguments if arguments is not None else {}, **kw)


def text(response: Any) -> str:
    result = result_of(response)
    assert result["resultType"] == "complete", result
    value: str = result["content"][0]["text"]
    return value


def first_state(
    client: Client, name: str = "test_input_required_result_elicitation", **kw: Any
) -> str:
    state: str = input_required(tool(client, name, **kw))["requestState"]
    return state


def answer_name(client: Client, state: Any, **kw: Any) -> Any:
    """Retry the elicitation tool with ``state`` and the name Ada."""
    return tool(
        client,
        "test_input_required_result_elicitation",
        responses={"user_name": ADA},
        state=state,
        **kw,
    )


def answer_name_later(client: Client, monkeypatch: pytest.MonkeyPatch, seconds: float) -> Any:
    """Ask, then answer ``seconds`` later with ``REQUEST_STATE_MAX_AGE`` 60 (the clock is
    moved, never slept)."""
    with override_mcp(REQUEST_STATE_MAX_AGE=60):
        state = first_state(client)
        later = time.time() + seconds
        monkeypatch.setattr(sealing, "time", SimpleNamespace(time=lambda: later))
        return answer_name(client, state)


# -- the paths --------------------------------------------------------------------------------


def test_an_elicitation_round_trip_completes_on_the_retry(client: Client):
    """basic/patterns/mrtr.mdx: the first attempt returns ``input_required`` with bare
    ``{method, params}`` input requests (no ``jsonrpc``, no ``id``) and a ``requestState``;
    the retry with a new id, ``inputResponses`` and the echoed state completes.
    client/elicitation.mdx: form mode carries ``message`` and a flat object
    ``requestedSchema``."""
    first = input_required(tool(client, "test_input_required_result_elicitation"))

    request = first["inputRequests"]["user_name"]
    assert set(request) == {"method", "params"}
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"]
    assert request["params"]["requestedSchema"]["type"] == "object"
    assert "name" in request["params"]["requestedSchema"]["properties"]
    assert isinstance(first["requestState"], str)

    retry = answer_name(client, first["requestState"], id=2)

    assert text(retry) == "Hello, Ada!"


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_elicitation_is_an_answer_too(client: Client, action: str):
    """client/elicitation.mdx, "Error Handling": servers "MUST handle cases where the user
    declines or cancels the elicitation"; the server checks the ``action`` of every
    ElicitResult."""
    state = first_state(client)

    retry = tool(
        client,
        "test_input_required_result_elicitation",
        responses={"user_name": {"action": action}},
        state=state,
        id=2,
    )

    assert text(retry) == f"No name given ({action})."


def test_several_inputs_are_asked_in_one_round(client: Client):
    """basic/patterns/mrtr.mdx: ``inputRequests`` maps server-chosen keys to requests of any
    declared kind (elicitation, sampling, roots); the retry answers them all at once."""
    name = "test_input_required_result_multiple_inputs"
    first = input_required(tool(client, name, capabilities=EVERYTHING))

    assert {key: r["method"] for key, r in first["inputRequests"].items()} == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    answers = {
        "user_name": ADA,
        "greeting": {
            "role": "assistant",
            "content": {"type": "text", "text": "hi"},
            "model": "test-model",
        },
        "client_roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
    }
    retry = tool(
        client, name, responses=answers, state=first["requestState"], capabilities=EVERYTHING, id=2
    )

    assert text(retry) == "Hello, Ada! The model said: hi; 2 root(s)."


def test_a_multi_round_request_carries_earlier_answers_in_a_changing_state(client: Client):
    """basic/patterns/mrtr.mdx: "The server must be able to finish using only what the retry
    carries, via requestState"; it may ask again, and each round's state differs."""
    name = "test_input_required_result_multi_round"
    first = input_required(tool(client, name))
    assert set(first["inputRequests"]) == {"step1"}

    second = input_required(
        tool(client, name, responses={"step1": ADA}, state=first["requestState"], id=2)
    )
    assert set(second["inputRequests"]) == {"step2"}
    assert second["requestState"] != first["requestState"]

    blue = {"action": "accept", "content": {"color": "blue"}}
    third = tool(client, name, responses={"step2": blue}, state=second["requestState"], id=3)

    assert text(third) == "Ada likes blue."


def test_an_older_state_without_the_earlier_answer_asks_for_it_again(client: Client):
    """basic/patterns/mrtr.mdx: "If needed input is missing, SHOULD answer with another
    InputRequiredResult instead of an error"."""
    name = "test_input_required_result_multi_round"
    first = input_required(tool(client, name))
    blue = {"action": "accept", "content": {"color": "blue"}}

    again = input_required(
        tool(client, name, responses={"step2": blue}, state=first["requestState"], id=2)
    )

    assert set(again["inputRequests"]) == {"step1"}


def test_unknown_input_response_keys_are_ignored(client: Client):
    """basic/patterns/mrtr.mdx: "Ignore unknown extra keys in inputResponses"."""
    state = first_state(client)
    responses = {"user_name": ADA, "bogus": {"anything": True}, "other": 5}

    retry = tool(
        client, "test_input_required_result_elicitation", responses=responses, state=state, id=2
    )

    assert text(retry) == "Hello, Ada!"


def test_only_unknown_input_response_keys_leave_the_input_still_required(client: Client):
    """basic/patterns/mrtr.mdx: unknown keys are ignored, so the needed input is still
    missing and the server asks again rather than failing."""
    state = first_state(client)

    retry = tool(
        client, "test_input_required_result_elicitation", responses={"bogus": ADA}, state=state
    )

    assert set(input_required(retry)["inputRequests"]) == {"user_name"}


def test_an_answer_to_a_question_not_yet_asked_is_ignored(client: Client):
    """basic/patterns/mrtr.mdx: "Ignore unknown extra keys in inputResponses". Round 1 asks
    only step1, so an unsolicited step2 is not sealed into the state: step2 is still asked
    once step1 is answered, and the answer given then is the one used."""
    name = "test_input_required_result_multi_round"
    red = {"action": "accept", "content": {"color": "red"}}
    first = input_required(tool(client, name, responses={"step2": red}))
    assert set(first["inputRequests"]) == {"step1"}

    second = input_required(
        tool(client, name, responses={"step1": ADA}, state=first["requestState"], id=2)
    )
    assert set(second["inputRequests"]) == {"step2"}

    blue = {"action": "accept", "content": {"color": "blue"}}
    third = tool(client, name, responses={"step2": blue}, state=second["requestState"], id=3)
    assert text(third) == "Ada likes blue."


def test_unknown_input_response_keys_do_not_grow_the_request_state(client: Client):
    """basic/patterns/mrtr.mdx: unknown keys in inputResponses are ignored, so they are not
    sealed into (and echoed back in) the next requestState."""
    name = "test_input_required_result_multi_round"
    small = input_required(tool(client, name))["requestState"]
    junk = {f"junk{i}": {"x": "y" * 1000} for i in range(200)}

    padded = input_required(tool(client, name, responses=junk, id=2))["requestState"]

    assert len(padded) < len(small) + 100, (len(small), len(padded))


def test_a_prompt_can_require_input(client: Client):
    """basic/patterns/mrtr.mdx: ``prompts/get`` may return ``InputRequiredResult``."""
    first = input_required(ask(client, "prompts/get", "confirm_prompt", {}, path=STREAMS))

    retry = ask(
        client,
        "prompts/get",
        "confirm_prompt",
        {},
        responses={"tone": {"action": "accept", "content": {"tone": "calm"}}},
        state=first["requestState"],
        path=STREAMS,
        id=2,
    )

    result = result_of(retry)
    assert result["resultType"] == "complete"
    assert result["messages"][0]["content"]["text"] == "Tone: calm"


def test_a_resource_read_reached_through_a_retry_is_never_cached(client: Client):
    """basic/patterns/mrtr.mdx: ``resources/read`` may return ``InputRequiredResult``.
    server/utilities/caching.mdx: a result reached through a retry depends on that
    exchange, so it carries ``ttlMs: 0`` and ``cacheScope: "private"`` whatever the
    resource declares (here 60 s, public)."""
    first = input_required(ask(client, "resources/read", "secret://a", path=STREAMS))

    retry = ask(
        client,
        "resources/read",
        "secret://a",
        responses={"confirm": {"action": "accept", "content": {"ok": True}}},
        state=first["requestState"],
        path=STREAMS,
        id=2,
    )

    result = result_of(retry)
    assert result["contents"][0]["text"] == "secret a"
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


def test_a_resource_read_without_a_retry_keeps_its_declared_cache_hints(client: Client):
    """server/utilities/caching.mdx: ordinary reads carry the declared hints."""
    result = result_of(ask(client, "resources/read", "plain://note", path=STREAMS))

    assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("prompts/list", {}),
        ("resources/list", {}),
        ("server/discover", {}),
    ],
)
def test_a_method_outside_mrtr_never_returns_input_required(
    client: Client, method: str, params: dict[str, Any]
):
    """basic/patterns/mrtr.mdx: "Servers MUST NOT return it for any other method", even
    when the request carries MRTR fields."""
    state = first_state(client)
    body = {**params, "inputResponses": {"user_name": ADA}, "requestState": state}

    result = result_of(mcp_post(client, method, body, meta=request_meta(capabilities=FORM)))

    assert result["resultType"] == "complete"


# -- capabilities -------------------------------------------------------------------------------


def test_asking_a_client_without_the_capability_is_missing_capability(client: Client):
    """basic/patterns/mrtr.mdx: the server MUST NOT include an input request type the client
    did not declare; if the operation cannot proceed without it, it returns -32021
    (basic/index.mdx, "_meta": HTTP 400, ``data.requiredCapabilities`` an object)."""
    response = tool(client, "test_input_required_result_elicitation", capabilities={})

    error = assert_error(response, 400, -32021)
    assert error["data"]["requiredCapabilities"] == {"elicitation": {}}


def test_one_undeclared_kind_in_a_round_fails_the_whole_round(client: Client):
    """basic/patterns/mrtr.mdx: no undeclared input request type is ever sent, even beside
    declared ones."""
    response = tool(client, "test_input_required_result_multiple_inputs", capabilities=FORM)

    error = assert_error(response, 400, -32021)
    assert error["data"]["requiredCapabilities"] == {"sampling": {}, "roots": {}}


@pytest.mark.parametrize(
    ("declared", "required"),
    [
        ({}, {"elicitation": {}, "sampling": {}, "roots": {}}),
        ({"sampling": {}}, {"elicitation": {}, "roots": {}}),
    ],
    ids=["nothing", "sampling"],
)
def test_missing_capability_names_every_capability_the_round_needs(
    client: Client, declared: dict[str, Any], required: dict[str, Any]
):
    """schema.json, ``MissingRequiredClientCapabilityError``: ``data.requiredCapabilities``
    is "the capabilities the server requires from the client to process this request",
    every one the client left out, not only the first: a client that declares just that one
    and retries must not meet a second -32021 for the next."""
    response = tool(client, "test_input_required_result_multiple_inputs", capabilities=declared)

    error = assert_error(response, 400, -32021)
    assert error["data"]["requiredCapabilities"] == required


def test_missing_form_and_url_elicitation_name_both_modes(client: Client, mcp_site: Any):
    """client/elicitation.mdx, "Capabilities": ``elicitation: {}`` means form only, so a
    round needing a form and a URL names both modes in ``requiredCapabilities`` (``{"url":
    {}}`` alone would tell the client a form is not needed)."""

    @mcp_site.tool
    def form_and_url(ctx: Context) -> str:
        ctx.request_input({"form": Elicit("Name?", {"name": str}), "url": ElicitURL("Go", URL)})
        return "done"

    response = tool(client, "form_and_url", capabilities={})

    error = assert_error(response, 400, -32021)
    assert error["data"]["requiredCapabilities"] == {"elicitation": {"form": {}, "url": {}}}


@pytest.mark.parametrize("declared", [{}, {"form": {}}], ids=["empty", "form-only"])
def test_url_mode_elicitation_needs_the_url_capability(client: Client, declared: dict[str, Any]):
    """client/elicitation.mdx, "Capabilities": "Servers MUST NOT send elicitation requests
    with modes that are not supported by the client"; ``elicitation: {}`` means form only."""
    response = tool(client, "connect_account", capabilities={"elicitation": declared}, path=STREAMS)

    error = assert_error(response, 400, -32021)
    assert error["data"]["requiredCapabilities"] == {"elicitation": {"url": {}}}


def test_form_mode_elicitation_needs_the_form_capability(client: Client):
    """client/elicitation.mdx: a client declaring only ``url`` did not declare forms."""
    response = tool(
        client, "test_input_required_result_elicitation", capabilities={"elicitation": {"url": {}}}
    )

    assert_error(response, 400, -32021)


def test_url_mode_elicitation_round_trip(client: Client):
    """basic/patterns/mrtr.mdx, URL mode: the input request is ``elicitation/create`` with
    ``mode: "url"``, ``message`` and ``url``; the client's ``accept`` only means the user
    agreed to open it."""
    capabilities = {"elicitation": {"url": {}}}
    first = input_required(tool(client, "connect_account", capabilities=capabilities, path=STREAMS))

    params = first["inputRequests"]["elicitation"]["params"]
    assert params["mode"] == "url"
    assert params["url"].startswith("https://")
    assert params["message"]

    retry = tool(
        client,
        "connect_account",
        responses={"elicitation": {"action": "accept"}},
        state=first["requestState"],
        capabilities=capabilities,
        path=STREAMS,
        id=2,
    )

    assert text(retry) == "url accept"


def test_a_pydantic_form_schema_is_sent_as_json_schema_and_validates_the_answer(client: Client):
    """client/elicitation.mdx: ``requestedSchema`` is a flat object schema of primitives;
    "Servers SHOULD validate received data matches the requested schema": with a pydantic
    model the accepted content is validated into an instance, and content that does not
    fit is -32602."""
    first = input_required(tool(client, "book_seats", path=STREAMS))
    schema = first["inputRequests"]["booking"]["params"]["requestedSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["seats"]["type"] == "integer"
    state = first["requestState"]

    def answer(content: dict[str, Any]) -> Any:
        responses = {"booking": {"action": "accept", "content": content}}
        return tool(client, "book_seats", responses=responses, state=state, path=STREAMS)

    assert text(answer({"seats": 2, "window": True})) == "2 seat(s), window=True"
    assert_error(answer({"seats": 0}), 200, -32602)
    assert_error(answer({"seats": "many"}), 200, -32602)


# -- malformed input ------------------------------------------------------------------------


@pytest.mark.parametrize("responses", [None, 5, "Ada", [ADA], True], ids=repr)
def test_malformed_input_responses_are_invalid_params(client: Client, responses: Any):
    """basic/patterns/mrtr.mdx: "Validate the structure of InputResponses; malformed data gets
    a JSON-RPC error" (-32602)."""
    state = first_state(client)

    response = tool(
        client, "test_input_required_result_elicitation", responses=responses, state=state
    )

    assert_error(response, 200, -32602)


@pytest.mark.parametrize(
    "answer",
    [
        5,
        None,
        {"action": "maybe"},
        {"content": {"name": "Ada"}},
        {"action": "accept", "content": "Ada"},
    ],
    ids=repr,
)
def test_a_malformed_elicitation_result_is_invalid_params(client: Client, answer: Any):
    """client/elicitation.mdx, "Response Actions": the result is ``{action: accept|decline|cancel,
    content?: object}``; anything else for a requested key is -32602."""
    state = first_state(client)

    response = tool(
        client,
        "test_input_required_result_elicitation",
        responses={"user_name": answer},
        state=state,
    )

    assert_error(response, 200, -32602)


PARIS = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris."},
    "model": "test-model",
}
BROKEN_SAMPLES: list[dict[str, Any]] = [
    {"content": 5},
    {"content": "Paris."},
    {"content": {"type": "text"}},
    {"content": {"type": "text", "text": 5}},
    {"content": {"type": ["text"], "text": "Paris."}},
    {"content": {"type": "video", "text": "Paris."}},
    {"content": [{"type": "text", "text": "Paris."}, {"type": "image", "data": "x"}]},
    {"content": {"type": "tool_use", "id": "1", "name": "f", "input": []}},
    {"role": "robot"},
    {"role": None},
    {"model": 7},
]


@pytest.mark.parametrize(
    ("name", "key", "answer"),
    [
        ("test_input_required_result_sampling", "capital_question", {"content": {}}),
        *(
            ("test_input_required_result_sampling", "capital_question", {**PARIS, **broken})
            for broken in BROKEN_SAMPLES
        ),
        ("test_input_required_result_list_roots", "client_roots", {"roots": "file:///"}),
        ("test_input_required_result_list_roots", "client_roots", {"roots": [1]}),
        ("test_input_required_result_list_roots", "client_roots", {"roots": [None]}),
        ("test_input_required_result_list_roots", "client_roots", {"roots": [{"uri": 5}]}),
        ("test_input_required_result_list_roots", "client_roots", {"roots": [{"name": "a"}]}),
        *(
            ("test_input_required_result_list_roots", "client_roots", {"roots": [{"uri": uri}]})
            for uri in ("https://example.com/", "/home/alice", "../etc", "FILE:/x", "")
        ),
        (
            "test_input_required_result_list_roots",
            "client_roots",
            {"roots": [{"uri": "file:///a", "name": 7}]},
        ),
    ],
)
def test_malformed_sampling_and_roots_results_are_invalid_params(
    client: Client, name: str, key: str, answer: Any
):
    """basic/patterns/mrtr.mdx: a ``CreateMessageResult`` needs a string ``model``, a
    ``role`` and ``content`` that is a sampling content block or a list of them, each with
    its required members (schema.json; anything else reached the tool, which failed on it
    with -32603); a ``ListRootsResult`` needs a ``roots`` list of ``Root`` objects, each
    with a ``uri`` that starts with ``file://`` ("*must* ... for now") and, if named, a
    string ``name`` (schema.json, ``Root``). A
    malformed root is refused, not dropped: the tool would count roots the client never
    sent correctly."""
    state = first_state(client, name, capabilities=EVERYTHING)

    response = tool(client, name, responses={key: answer}, state=state, capabilities=EVERYTHING)

    assert_error(response, 200, -32602)


# -- attacks on requestState ------------------------------------------------------------------


def _flip(state: str) -> str:
    middle = len(state) // 2
    return state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]


@pytest.mark.parametrize(
    "tamper",
    [
        _flip,
        lambda s: s[:-1] + ("A" if s[-1] != "A" else "B"),
        lambda s: s + "x",
        lambda s: s[:8] + "...." + s[8:],
        lambda s: s[:8] + "\n\n\n\n" + s[8:],
        lambda s: s + "==",
        lambda s: "not-a-state",
        lambda s: "",
        lambda s: 12345,
        lambda s: {"state": s},
    ],
    ids=[
        "payload",
        "signature",
        "appended",
        "dots",
        "newlines",
        "padded",
        "garbage",
        "empty",
        "number",
        "object",
    ],
)
def test_a_tampered_request_state_is_invalid_params(client: Client, tamper: Any):
    """basic/patterns/mrtr.mdx: protect the state's integrity and "reject state that fails
    verification" (-32602, our choice of code). The client echoes "the exact string": one
    spelled otherwise is refused even when base64 would read the same bytes from it (the
    decoder skipped characters outside its alphabet, so ``....`` inserted was accepted,
    and a change to the last character's unused bits passed as no change)."""
    state = first_state(client)

    response = answer_name(client, tamper(state))

    assert_error(response, 200, -32602)


def test_an_expired_request_state_is_invalid_params(
    client: Client, monkeypatch: pytest.MonkeyPatch
):
    """basic/patterns/mrtr.mdx: bind "a short expiry" and check it on receipt; the lifetime
    is ``REQUEST_STATE_MAX_AGE`` (here 60 s; the clock is moved, never slept)."""
    response = answer_name_later(client, monkeypatch, 61)

    assert_error(response, 200, -32602)


def test_a_request_state_within_its_lifetime_is_accepted(
    client: Client, monkeypatch: pytest.MonkeyPatch
):
    """basic/patterns/mrtr.mdx: the expiry is a bound, not single use: just inside it the
    state is still valid."""
    response = answer_name_later(client, monkeypatch, 50)

    assert text(response) == "Hello, Ada!"


def test_a_fractional_lifetime_is_kept_to_the_fraction(
    client: Client, monkeypatch: pytest.MonkeyPatch
):
    """``REQUEST_STATE_MAX_AGE`` is "a positive number of seconds" (check E004 takes 1.5):
    it was cut to whole seconds, and the issue time too, so a state with a lifetime of
    1.5 s was refused 1.2 s after it was issued (and one of 0.5 s always)."""
    with override_mcp(REQUEST_STATE_MAX_AGE=1.5):
        state = first_state(client)
        later = time.time() + 1.2
        monkeypatch.setattr(sealing, "time", SimpleNamespace(time=lambda: later))
        response = answer_name(client, state)

    assert text(response) == "Hello, Ada!"


@pytest.mark.django_db
def test_a_request_state_replayed_by_another_user_is_invalid_params(django_user_model: Any):
    """basic/patterns/mrtr.mdx: bind "the authenticated principal" into the state; a state
    minted for Alice and replayed by Bob (or by an anonymous caller) is refused, while Alice
    can use it."""
    alice, bob, anonymous = Client(), Client(), Client()
    alice.force_login(django_user_model.objects.create_user("alice"))
    bob.force_login(django_user_model.objects.create_user("bob"))
    state = first_state(alice)

    assert_error(answer_name(bob, state, id=2), 200, -32602)
    assert_error(answer_name(anonymous, state, id=2), 200, -32602)
    assert text(answer_name(alice, state, id=2)) == "Hello, Ada!"


@pytest.mark.django_db
def test_an_anonymous_request_state_is_refused_to_a_logged_in_user(
    client: Client, django_user_model: Any
):
    """basic/patterns/mrtr.mdx: the principal bound in is "anonymous" for an anonymous
    caller, which is not the same principal as any user."""
    state = first_state(client)
    client.force_login(django_user_model.objects.create_user("carol"))

    response = answer_name(client, state)

    assert_error(response, 200, -32602)


def test_a_request_state_for_other_arguments_is_invalid_params(client: Client):
    """basic/patterns/mrtr.mdx: bind "the originating request, e.g. the method plus a digest
    of its salient params": the same tool with other arguments is another request."""
    state = first_state(client, "two_questions", arguments={"topic": "a"}, path=STREAMS)
    answer = {"name": ADA}

    other = tool(
        client, "two_questions", {"topic": "b"}, responses=answer, state=state, path=STREAMS
    )
    same = tool(
        client, "two_questions", {"topic": "a"}, responses=answer, state=state, path=STREAMS
    )

    assert_error(other, 200, -32602)
    assert set(input_required(same)["inputRequests"]) == {"color"}


def test_a_request_state_for_another_tool_is_invalid_params(client: Client):
    """basic/patterns/mrtr.mdx: a state is bound to its target: a state from one tool is
    refused by another, even one asking for the same key."""
    state = first_state(client, "test_input_required_result_request_state")

    response = tool(
        client,
        "test_input_required_result_tampered_state",
        responses={"confirm": {"action": "accept", "content": {"ok": True}}},
        state=state,
    )

    assert_error(response, 200, -32602)


def test_a_request_state_for_another_method_is_invalid_params(client: Client):
    """basic/patterns/mrtr.mdx: a state is bound to its method: the state of
    ``prompts/get confirm_prompt`` is refused by ``tools/call confirm_prompt`` (same name,
    same question)."""
    first = input_required(ask(client, "prompts/get", "confirm_prompt", {}, path=STREAMS))
    answer = {"tone": {"action": "accept", "content": {"tone": "calm"}}}

    response = tool(
        client, "confirm_prompt", responses=answer, state=first["requestState"], path=STREAMS
    )

    assert_error(response, 200, -32602)


def test_a_request_state_for_another_resource_is_invalid_params(client: Client):
    """basic/patterns/mrtr.mdx: for ``resources/read`` the state is bound to the URI."""
    first = input_required(ask(client, "resources/read", "secret://a", path=STREAMS))
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}

    response = ask(
        client,
        "resources/read",
        "secret://b",
        responses=answer,
        state=first["requestState"],
        path=STREAMS,
    )

    assert_error(response, 200, -32602)


# -- through a live server ----------------------------------------------------------------------


@pytest.mark.live
def test_an_elicitation_round_trip_through_a_live_server(daphne: LiveServer):
    """basic/patterns/mrtr.mdx: the state needs nothing kept on the server between rounds,
    so a retry over a new connection completes (Daphne, httpx)."""
    url = daphne.url()
    first = remote.result(
        url, remote.tool_call("test_input_required_result_elicitation", capabilities=FORM)
    )
    assert first["resultType"] == "input_required"

    retry = remote.message(
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "arguments": {},
            "inputResponses": {"user_name": ADA},
            "requestState": first["requestState"],
        },
        id=2,
        capabilities=FORM,
    )
    result = remote.result(url, retry)

    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "Hello, Ada!"


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text", "text": "Paris."}, {"type": "image", "data": "eA==", "mimeType": "a/b"}],
        {"type": "audio", "data": "eA==", "mimeType": "audio/wav"},
        {"type": "tool_use", "id": "1", "name": "f", "input": {}},
        {"type": "tool_result", "toolUseId": "1", "content": []},
    ],
)
def test_every_kind_of_sampling_content_is_an_answer(client: Client, content: Any):
    """schema.json, ``CreateMessageResult``: ``content`` is a text, image, audio, tool-use or
    tool-result block, or a list of them; each is accepted."""
    name = "test_input_required_result_sampling"
    state = first_state(client, name, capabilities=EVERYTHING)
    answer = {**PARIS, "content": content}

    response = tool(
        client, name, responses={"capital_question": answer}, state=state, capabilities=EVERYTHING
    )

    assert result_of(response)["resultType"] == "complete"
