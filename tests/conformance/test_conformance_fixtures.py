"""The conformance app's fixtures answer as the official MCP conformance suite expects.

``.ci/conformance.sh`` runs the suite itself (``@modelcontextprotocol/conformance``
0.2.0-alpha.12) against a live server; these tests pin, through the Django test client, the
values each scenario reads, so a change to a fixture or to the library that would break a
scenario fails here first. Every response is also validated against the 2026-07-28 schema
by the suite-wide ``conftest`` (the suite's ``wire-schema-valid`` check).

The requests carry what the suite's client sends: ``_meta`` with clientCapabilities
``{sampling, elicitation, roots}`` unless a scenario overrides it, and often no
``arguments`` at all.
"""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import pytest

from django_mcp import site
from django_mcp.protocol import errors
from django_mcp.protocol.admission import Admitted
from django_mcp.protocol.headers import normalise
from django_mcp.protocol.meta import LOG_LEVEL_KEY
from django_mcp.server.dispatch import MCPServer
from tests.helpers import (
    OMIT,
    assert_error,
    call_tool,
    input_required,
    mcp_body,
    mcp_headers,
    mcp_post,
    request_meta,
    result_of,
)

if TYPE_CHECKING:
    from django.test import Client

    from django_mcp.server.dispatch import Reply

#: What the suite's stateless client declares on every request (conformance.md, section 1).
SUITE_CAPABILITIES: dict[str, Any] = {
    "sampling": {},
    "elicitation": {},
    "roots": {"listChanged": True},
}
SUITE_CLIENT = {"name": "conformance-test-client", "version": "1.0.0"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

TOOLS = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_progress",
    "test_error_handling",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
]
PROMPTS = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
]


# These tests use no database, so the request log (written to one) is off.
pytestmark = pytest.mark.usefixtures("no_request_log")


def suite_meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    caps = SUITE_CAPABILITIES if capabilities is None else capabilities
    return request_meta(capabilities=caps, client_info=SUITE_CLIENT, **extra)


def handle_directly(
    method: str, params: dict[str, Any], *, meta: dict[str, Any]
) -> tuple[list[dict[str, Any]], Reply]:
    """Admit and handle one request on the default site, collecting what it would stream.

    The Django test client cannot read an SSE stream the way the suite does, so progress and
    log notifications are taken from the server's ``emit`` hook instead.
    """
    body = mcp_body(method, params, meta=meta)
    admission = MCPServer(site).admit(json.dumps(body).encode(), normalise(mcp_headers(body)))
    assert isinstance(admission, Admitted), admission
    events: list[dict[str, Any]] = []
    return events, MCPServer(site).handle(admission, emit=events.append)


def call(client: Client, name: str, **kw: Any) -> dict[str, Any]:
    """``tools/call`` without an ``arguments`` key, as the suite often sends it."""
    return result_of(call_tool(client, name, meta=kw.pop("meta", suite_meta()), **kw))


def request(client: Client, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return result_of(mcp_post(client, method, params, meta=suite_meta()))


def blocks_of(result: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [block for block in result["content"] if block["type"] == kind]


# -- discovery and lists -------------------------------------------------------------------


def test_discover_advertises_every_primitive_the_fixtures_serve(client: Client) -> None:
    """server/discover.mdx: capabilities list what the server serves; the
    suite's server-stateless step 4 needs ``prompts`` declared when prompts/list answers."""
    capabilities = request(client, "server/discover")["capabilities"]

    assert {"tools", "resources", "prompts", "completions"} <= capabilities.keys()


def test_tools_list_names_every_fixture_with_a_description_and_schema(client: Client) -> None:
    """server/tools.mdx, "Listing Tools": each Tool has name and inputSchema; the suite's
    tools-list scenario also fails a tool without a description."""
    tools = {tool["name"]: tool for tool in request(client, "tools/list")["tools"]}

    assert set(TOOLS) <= tools.keys()
    for tool in tools.values():
        assert tool["description"], tool
        assert tool["inputSchema"]["type"] == "object", tool


def test_tools_list_order_is_stable_across_calls(client: Client) -> None:
    """server/tools.mdx: tools/list SHOULD use a deterministic order."""
    orders = [[t["name"] for t in request(client, "tools/list")["tools"]] for _ in range(3)]

    assert orders[0] == orders[1] == orders[2]


def test_prompts_list_names_every_fixture_with_a_description(client: Client) -> None:
    """server/prompts.mdx, "Listing Prompts": the suite's prompts-list scenario fails a
    prompt without name and description."""
    prompts = {prompt["name"]: prompt for prompt in request(client, "prompts/list")["prompts"]}

    assert set(PROMPTS) <= prompts.keys()
    for prompt in prompts.values():
        assert prompt["description"], prompt
    arguments = {arg["name"]: arg for arg in prompts["test_prompt_with_arguments"]["arguments"]}
    assert arguments["arg1"]["required"] is True
    assert arguments["arg2"]["required"] is True
    embedded = prompts["test_prompt_with_embedded_resource"]["arguments"]
    assert [arg["name"] for arg in embedded] == ["resourceUri"]


def test_resources_and_the_template_are_listed(client: Client) -> None:
    """server/resources.mdx, "Listing Resources" and "Resource Templates": each resource
    has uri and name, each template uriTemplate and name."""
    resources = {r["uri"]: r for r in request(client, "resources/list")["resources"]}
    templates = {
        t["uriTemplate"]: t
        for t in request(client, "resources/templates/list")["resourceTemplates"]
    }

    assert resources["test://static-text"]["mimeType"] == "text/plain"
    assert resources["test://static-binary"]["mimeType"] == "image/png"
    assert all(resource["name"] for resource in resources.values())
    assert templates["test://template/{id}/data"]["name"]


# -- tool content --------------------------------------------------------------------------


def test_simple_text_returns_the_text_without_arguments(client: Client) -> None:
    """server/tools.mdx, "Text Content": the suite calls test_simple_text with no
    ``arguments`` key and needs a truthy text block."""
    result = call(client, "test_simple_text")

    assert result["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    assert result.get("isError") is not True


def test_image_content_returns_a_png(client: Client) -> None:
    """server/tools.mdx, "Image Content": data is base64 and mimeType names its type."""
    (image,) = blocks_of(call(client, "test_image_content"), "image")

    assert image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(PNG_SIGNATURE)


def test_audio_content_returns_wav_audio(client: Client) -> None:
    """server/tools.mdx, "Audio Content": the suite requires mimeType exactly audio/wav."""
    (audio,) = blocks_of(call(client, "test_audio_content"), "audio")

    assert audio["mimeType"] == "audio/wav"
    assert base64.b64decode(audio["data"]).startswith(b"RIFF")


def test_embedded_resource_returns_text_contents_with_uri_and_type(client: Client) -> None:
    """server/tools.mdx, "Embedded Resources": the resource has uri, mimeType and text."""
    (block,) = blocks_of(call(client, "test_embedded_resource"), "resource")

    assert block["resource"] == {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    }


def test_multiple_content_types_mixes_text_image_and_resource(client: Client) -> None:
    """server/tools.mdx, "Tool Result": content may hold several blocks of different types;
    the suite's tools-call-mixed-content needs text, image and resource."""
    result = call(client, "test_multiple_content_types")

    assert [block["type"] for block in result["content"]] == ["text", "image", "resource"]
    assert result["content"][2]["resource"]["mimeType"] == "application/json"


def test_error_handling_is_a_tool_error_result_not_a_protocol_error(client: Client) -> None:
    """server/tools.mdx, "Error Handling": execution errors are results with
    ``isError: true``; the suite fails a JSON-RPC error here."""
    result = call(client, "test_error_handling")

    assert result["isError"] is True
    assert result["content"][0]["type"] == "text"
    assert result["content"][0]["text"]


def test_tool_with_progress_completes_with_plain_json_when_the_client_cannot_stream(
    client: Client,
) -> None:
    """basic/transports/streamable-http.mdx, "Sending Messages to the Server": a client
    accepting only application/json gets one JSON response, so no progress is sent."""
    response = call_tool(
        client,
        "test_tool_with_progress",
        {},
        meta=suite_meta(progressToken="p-1"),
        headers={"Accept": "application/json"},
    )

    assert response["Content-Type"].startswith("application/json")
    assert result_of(response)["content"] == [{"type": "text", "text": "p-1"}]


def test_tool_with_progress_reports_0_50_100_of_100_with_the_callers_token() -> None:
    """basic/utilities/progress.mdx: notifications/progress carry the request's
    progressToken unchanged and increasing progress; the suite needs at least three."""
    events, reply = handle_directly(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}},
        meta=suite_meta(progressToken="progress-test-1"),
    )

    assert [event["method"] for event in events] == ["notifications/progress"] * 3
    assert [event["params"] for event in events] == [
        {"progressToken": "progress-test-1", "progress": progress, "total": 100}
        for progress in (0, 50, 100)
    ]
    assert reply.result is not None
    assert reply.result["content"] == [{"type": "text", "text": "progress-test-1"}]


# -- server-stateless diagnostics ------------------------------------------------------------


def test_missing_capability_is_refused_with_32021_when_sampling_is_undeclared(
    client: Client,
) -> None:
    """basic/index.mdx, "Client capabilities": a request needing an undeclared capability
    gets -32021 with ``data.requiredCapabilities`` as a ClientCapabilities object, HTTP 400
    (basic/index.mdx, "Error Codes")."""
    response = call_tool(client, "test_missing_capability", {}, meta=suite_meta({}))

    error = assert_error(response, 400, errors.MISSING_REQUIRED_CLIENT_CAPABILITY)
    assert error["data"]["requiredCapabilities"] == {"sampling": {}}


def test_missing_capability_succeeds_when_sampling_is_declared(client: Client) -> None:
    """basic/index.mdx, "Client capabilities": with the capability declared the request
    is served normally."""
    result = call(client, "test_missing_capability", meta=suite_meta({"sampling": {}}))

    assert result["content"] == [{"type": "text", "text": "Success"}]


def test_streaming_elicitation_answers_without_sending_a_request(client: Client) -> None:
    """basic/transports/streamable-http.mdx: a server never sends a JSON-RPC request on a
    response stream (stateless; MRTR replaces server-to-client requests)."""
    response = call_tool(
        client, "test_streaming_elicitation", {}, meta=suite_meta({"elicitation": {}})
    )

    assert response["Content-Type"].startswith("application/json")
    assert result_of(response)["content"]


def test_logging_tool_answers_without_a_log_level(client: Client) -> None:
    """basic/index.mdx, "_meta": log notifications are opt-in by logLevel; without it the
    call returns plain JSON (server-stateless: no notifications/message)."""
    response = call_tool(client, "test_logging_tool", {}, meta=suite_meta({}))

    assert response["Content-Type"].startswith("application/json")
    assert result_of(response)["content"]


def test_logging_tool_logs_only_at_or_above_the_requested_level() -> None:
    """server/utilities/logging.mdx: ``logLevel`` opts the request into
    notifications/message at that level and above."""
    info_events, _ = handle_directly(
        "tools/call",
        {"name": "test_logging_tool", "arguments": {}},
        meta=suite_meta(**{LOG_LEVEL_KEY: "info"}),
    )
    error_events, _ = handle_directly(
        "tools/call",
        {"name": "test_logging_tool", "arguments": {}},
        meta=suite_meta(**{LOG_LEVEL_KEY: "error"}),
    )

    assert [event["method"] for event in info_events] == ["notifications/message"]
    assert info_events[0]["params"]["level"] == "info"
    assert error_events == []


def test_trigger_tool_change_leaves_the_tool_list_the_same(client: Client) -> None:
    """server/tools.mdx, "List Changed Notification": the trigger re-registers a tool; the
    list the suite compares afterwards keeps its names and order."""
    before = request(client, "tools/list")["tools"]

    result = call(client, "test_trigger_tool_change")

    assert result.get("isError") is not True
    assert request(client, "tools/list")["tools"] == before


def test_trigger_prompt_change_leaves_the_prompt_list_the_same(client: Client) -> None:
    """server/prompts.mdx, "List Changed Notification": the trigger re-registers a prompt;
    the prompt list keeps its names and order."""
    before = request(client, "prompts/list")["prompts"]

    result = call(client, "test_trigger_prompt_change")

    assert result.get("isError") is not True
    assert request(client, "prompts/list")["prompts"] == before


# -- resources --------------------------------------------------------------------------------


def test_static_text_resource_reads_as_text(client: Client) -> None:
    """server/resources.mdx, "Reading Resources": text contents carry uri, mimeType, text."""
    result = request(client, "resources/read", {"uri": "test://static-text"})

    assert result["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]


def test_static_binary_resource_reads_as_a_base64_png_blob(client: Client) -> None:
    """server/resources.mdx, "Binary Content": blob is base64 with a mimeType."""
    (item,) = request(client, "resources/read", {"uri": "test://static-binary"})["contents"]

    assert item["uri"] == "test://static-binary"
    assert item["mimeType"] == "image/png"
    assert base64.b64decode(item["blob"]).startswith(PNG_SIGNATURE)


def test_template_resource_reads_as_text_naming_the_id(client: Client) -> None:
    """server/resources.mdx, "Resource Templates": the suite reads
    test://template/123/data and needs text (not a blob) containing the id."""
    (item,) = request(client, "resources/read", {"uri": "test://template/123/data"})["contents"]

    assert item["uri"] == "test://template/123/data"
    assert "123" in item["text"]


def test_unknown_resource_is_invalid_params_naming_the_uri(client: Client) -> None:
    """server/resources.mdx, "Error Handling": not found is -32602 with ``data.uri`` and
    never an empty contents list (SEP-2164)."""
    uri = "test://nonexistent-resource-for-conformance-testing"
    response = mcp_post(client, "resources/read", {"uri": uri}, meta=suite_meta())

    error = assert_error(response, 200, errors.INVALID_PARAMS)
    assert error["data"]["uri"] == uri


# -- prompts and completion ---------------------------------------------------------------------


def test_simple_prompt_is_one_user_text_message(client: Client) -> None:
    """server/prompts.mdx, "Getting a Prompt": messages have role and content; the suite
    sends no ``arguments``."""
    result = request(client, "prompts/get", {"name": "test_simple_prompt"})

    assert result["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt for testing."},
        }
    ]


def test_prompt_with_arguments_uses_both_values(client: Client) -> None:
    """server/prompts.mdx, "Getting a Prompt": arguments are strings substituted into the
    messages; the suite looks for both values."""
    result = request(
        client,
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "testValue1", "arg2": "v2"}},
    )

    text = result["messages"][0]["content"]["text"]
    assert "testValue1" in text
    assert "v2" in text


def test_prompt_with_embedded_resource_embeds_the_given_uri(client: Client) -> None:
    """server/prompts.mdx, "Embedded Resources": a message's content may be a resource."""
    result = request(
        client,
        "prompts/get",
        {
            "name": "test_prompt_with_embedded_resource",
            "arguments": {"resourceUri": "test://example-resource"},
        },
    )

    first = result["messages"][0]
    assert first["role"] == "user"
    assert first["content"]["type"] == "resource"
    assert first["content"]["resource"]["uri"] == "test://example-resource"
    assert first["content"]["resource"]["text"]


def test_prompt_with_image_includes_a_png(client: Client) -> None:
    """server/prompts.mdx, "Image Content": a message's content may be an image."""
    result = request(client, "prompts/get", {"name": "test_prompt_with_image"})

    images = [m["content"] for m in result["messages"] if m["content"]["type"] == "image"]
    assert images[0]["mimeType"] == "image/png"
    assert base64.b64decode(images[0]["data"]).startswith(PNG_SIGNATURE)


def test_completion_of_arg1_suggests_values_with_the_typed_prefix(client: Client) -> None:
    """server/utilities/completion.mdx: values (at most 100) complete the typed value."""
    result = request(
        client,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "test"},
        },
    )

    values = result["completion"]["values"]
    assert values
    assert len(values) <= 100
    assert all(value.startswith("test") for value in values)


# -- not scored at 2026-07-28 ---------------------------------------------------------------------


def test_header_param_tool_advertises_and_checks_its_mirrored_header(client: Client) -> None:
    """server/tools.mdx, "x-mcp-header": the property is annotated with the header name, and
    a call whose ``Mcp-Param-Region`` header is missing is refused with -32020, HTTP 400
    (basic/transports/streamable-http.mdx, "Server Behavior for Custom Headers");
    http-custom-header-server-validation needs such a string parameter."""
    tools = {tool["name"]: tool for tool in request(client, "tools/list")["tools"]}
    region = tools["test_header_param"]["inputSchema"]["properties"]["region"]
    assert region["x-mcp-header"] == "Region"
    assert region["type"] == "string"

    ok = call_tool(
        client,
        "test_header_param",
        {"region": "Hello"},
        meta=suite_meta(),
        headers={"Mcp-Param-Region": "Hello"},
    )
    missing = call_tool(client, "test_header_param", {"region": "Hello"}, meta=suite_meta())

    assert result_of(ok)["content"] == [{"type": "text", "text": "Region: Hello"}]
    assert_error(missing, 400, errors.HEADER_MISMATCH)


# -- multi round-trip requests (input_required) ---------------------------------------------------

ELICIT_TOOL = "test_input_required_result_elicitation"
ALICE = {"action": "accept", "content": {"name": "Alice"}}


def mrtr_round(
    client: Client,
    name: str,
    responses: Any = OMIT,
    state: str | None = None,
    *,
    method: str = "tools/call",
    capabilities: dict[str, Any] | None = None,
) -> Any:
    """One round of a multi round-trip call: ``arguments: {}`` plus what the retry carries."""
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if responses is not OMIT:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    return mcp_post(client, method, params, meta=suite_meta(capabilities))


def test_elicitation_tool_asks_for_user_name_then_greets(client: Client) -> None:
    """basic/patterns/mrtr.mdx: the first round returns ``input_required`` with an
    elicitation/create request; the retry with the answer and the echoed requestState
    completes."""
    first = input_required(mrtr_round(client, ELICIT_TOOL))
    request = first["inputRequests"]["user_name"]

    final = result_of(mrtr_round(client, ELICIT_TOOL, {"user_name": ALICE}, first["requestState"]))

    assert request["method"] == "elicitation/create"
    assert request["params"]["requestedSchema"]["type"] == "object"
    assert final["resultType"] == "complete"
    assert final["content"] == [{"type": "text", "text": "Hello, Alice!"}]


def test_elicitation_tool_completes_from_the_answer_alone_ignoring_extra_keys(
    client: Client,
) -> None:
    """basic/patterns/mrtr.mdx: each attempt stands alone, and unknown keys in
    inputResponses are ignored."""
    responses = {"user_name": ALICE, "unknown_extra_key": {"action": "cancel"}}

    result = result_of(mrtr_round(client, ELICIT_TOOL, responses))

    assert result["resultType"] == "complete"


def test_elicitation_tool_asks_again_when_its_answer_is_missing(client: Client) -> None:
    """basic/patterns/mrtr.mdx: missing input SHOULD get another InputRequiredResult, not
    an error."""
    wrong = {"wrong_key": {"action": "accept", "content": {"data": "wrong"}}}

    result = input_required(mrtr_round(client, ELICIT_TOOL, wrong))

    assert "user_name" in result["inputRequests"]


@pytest.mark.parametrize("responses", [{"user_name": 12345}, None])
def test_elicitation_tool_refuses_malformed_input_responses(client: Client, responses: Any) -> None:
    """basic/patterns/mrtr.mdx: malformed InputResponses get a JSON-RPC error, -32602
    (basic/index.mdx, "Error Codes")."""
    response = mrtr_round(client, ELICIT_TOOL, responses)

    assert_error(response, 200, errors.INVALID_PARAMS)


def test_sampling_tool_asks_the_model_then_completes(client: Client) -> None:
    """basic/patterns/mrtr.mdx: a sampling/createMessage input request needs messages and
    an integer maxTokens (schema CreateMessageRequest)."""
    first = input_required(mrtr_round(client, "test_input_required_result_sampling"))
    (key, request), *_ = first["inputRequests"].items()
    answer = {
        "role": "assistant",
        "content": {"type": "text", "text": "The capital of France is Paris."},
        "model": "test-model",
        "stopReason": "endTurn",
    }

    final = result_of(
        mrtr_round(
            client, "test_input_required_result_sampling", {key: answer}, first["requestState"]
        )
    )

    assert request["method"] == "sampling/createMessage"
    assert request["params"]["maxTokens"] == 100
    assert "Paris" in final["content"][0]["text"]


def test_list_roots_tool_asks_for_roots_then_names_them(client: Client) -> None:
    """basic/patterns/mrtr.mdx: a roots/list input request; the answer lists the roots."""
    first = input_required(mrtr_round(client, "test_input_required_result_list_roots"))
    (key, request), *_ = first["inputRequests"].items()
    roots = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}

    final = result_of(
        mrtr_round(
            client, "test_input_required_result_list_roots", {key: roots}, first["requestState"]
        )
    )

    assert request["method"] == "roots/list"
    assert "file:///test/root" in final["content"][0]["text"]


def test_request_state_tool_round_trips_its_state(client: Client) -> None:
    """basic/patterns/mrtr.mdx: the server may carry what it needs in requestState, which
    the client echoes verbatim."""
    name = "test_input_required_result_request_state"
    first = input_required(mrtr_round(client, name))
    (key,) = first["inputRequests"]

    final = result_of(
        mrtr_round(
            client,
            name,
            {key: {"action": "accept", "content": {"ok": True}}},
            first["requestState"],
        )
    )

    assert first["requestState"]
    assert final["content"] == [{"type": "text", "text": "state-ok"}]


def test_multiple_inputs_tool_asks_for_all_three_kinds_at_once(client: Client) -> None:
    """basic/patterns/mrtr.mdx: one InputRequiredResult may hold several input requests
    under unique keys."""
    name = "test_input_required_result_multiple_inputs"
    first = input_required(mrtr_round(client, name))
    answers = {
        "user_name": ALICE,
        "greeting": {
            "role": "assistant",
            "content": {"type": "text", "text": "Hello!"},
            "model": "test-model",
        },
        "client_roots": {"roots": [{"uri": "file:///test/root"}]},
    }

    final = result_of(mrtr_round(client, name, answers, first["requestState"]))

    assert {key: request["method"] for key, request in first["inputRequests"].items()} == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    assert final["resultType"] == "complete"


def test_multi_round_tool_asks_twice_with_a_new_state_each_round(client: Client) -> None:
    """basic/patterns/mrtr.mdx: a retry may itself get another InputRequiredResult; each
    round's requestState carries the answers so far."""
    name = "test_input_required_result_multi_round"
    first = input_required(mrtr_round(client, name))
    second = input_required(
        mrtr_round(
            client,
            name,
            {"step1": {"action": "accept", "content": {"name": "Alice"}}},
            first["requestState"],
        )
    )
    final = result_of(
        mrtr_round(
            client,
            name,
            {"step2": {"action": "accept", "content": {"color": "blue"}}},
            second["requestState"],
        )
    )

    assert list(first["inputRequests"]) == ["step1"]
    assert list(second["inputRequests"]) == ["step2"]
    assert second["requestState"] != first["requestState"]
    assert final["content"] == [{"type": "text", "text": "Alice likes blue."}]


def test_tampered_request_state_is_refused_with_invalid_params(client: Client) -> None:
    """basic/patterns/mrtr.mdx, requestState security: an integrity-protected state that
    fails verification is rejected, with -32602."""
    name = "test_input_required_result_tampered_state"
    first = input_required(mrtr_round(client, name))
    (key,) = first["inputRequests"]
    answer = {key: {"action": "accept", "content": {"ok": True}}}

    response = mrtr_round(client, name, answer, first["requestState"] + "-TAMPERED")

    assert_error(response, 200, errors.INVALID_PARAMS)


def test_capabilities_tool_asks_only_through_declared_capabilities(client: Client) -> None:
    """basic/patterns/mrtr.mdx: the server MUST NOT include an input request type the
    client did not declare on this request."""
    result = input_required(
        mrtr_round(client, "test_input_required_result_capabilities", capabilities={"sampling": {}})
    )

    methods = {request["method"] for request in result["inputRequests"].values()}
    assert methods == {"sampling/createMessage"}


def test_input_required_prompt_asks_for_context_then_renders_it(client: Client) -> None:
    """basic/patterns/mrtr.mdx: prompts/get may return input_required too; the retry
    returns the GetPromptResult."""
    name = "test_input_required_result_prompt"
    first = input_required(mrtr_round(client, name, method="prompts/get"))
    (key, request), *_ = first["inputRequests"].items()
    answer = {key: {"action": "accept", "content": {"context": "test context"}}}

    final = result_of(mrtr_round(client, name, answer, first["requestState"], method="prompts/get"))

    assert request["method"] == "elicitation/create"
    assert "test context" in final["messages"][0]["content"]["text"]
