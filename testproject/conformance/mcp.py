"""Fixtures the official MCP conformance suite calls, on the default site.

The names, arguments and returned values follow what the suite's scenarios check
(``@modelcontextprotocol/conformance`` 0.2.0-alpha.12, run by ``.ci/conformance.sh``);
docs/conformance.md lists which scenarios are still expected to fail and why.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Annotated, Any

from pydantic import Field

import django_mcp
from django_mcp import (
    Audio,
    Context,
    EmbeddedResource,
    Image,
    MCPHeader,
    Message,
    ResourceContents,
    Text,
    ToolError,
    user,
)
from django_mcp.conf import mcp_settings
from django_mcp.protocol.errors import InvalidParams, MissingRequiredClientCapability
from django_mcp.server.input_requests import Elicit, InputRequest, ListRoots, Sample

#: A 1x1 PNG, base64.
PNG_1X1 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    "2mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
#: A tiny WAV file, base64.
WAV_TINY = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"


# -- content --------------------------------------------------------------------------


@django_mcp.tool(read_only=True)
def test_simple_text() -> str:
    """Return a simple text response."""
    return SIMPLE_TEXT


@django_mcp.tool(read_only=True)
def test_image_content() -> Image:
    """Return a 1x1 PNG image."""
    return Image(PNG_1X1, mime_type="image/png")


@django_mcp.tool(read_only=True)
def test_audio_content() -> Audio:
    """Return a short WAV clip."""
    return Audio(WAV_TINY, mime_type="audio/wav")


@django_mcp.tool(read_only=True)
def test_embedded_resource() -> EmbeddedResource:
    """Return an embedded text resource."""
    return EmbeddedResource(
        ResourceContents(
            uri="test://embedded-resource",
            mime_type="text/plain",
            text="This is an embedded resource content.",
        )
    )


@django_mcp.tool(read_only=True)
def test_multiple_content_types() -> list[Text | Image | EmbeddedResource]:
    """Return text, an image and an embedded resource in one result."""
    return [
        Text("Multiple content types test:"),
        Image(PNG_1X1, mime_type="image/png"),
        EmbeddedResource(
            ResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text='{"test":"data","value":123}',
            )
        ),
    ]


@django_mcp.tool(read_only=True)
def test_error_handling() -> str:
    """Always fail with a tool execution error (isError: true)."""
    raise ToolError(ERROR_TEXT)


@django_mcp.tool(read_only=True)
def test_tool_with_progress(ctx: Context) -> str:
    """Report progress 0, 50 and 100 (out of 100) when the caller asked for progress, about
    50 ms apart, as the conformance suite's fixture does (and as ``PROGRESS_INTERVAL``, 50 ms
    by default, lets each one through: reports closer together are paced)."""
    for step, progress in enumerate((0, 50, 100)):
        if step:
            time.sleep(max(0.05, float(mcp_settings.PROGRESS_INTERVAL)))
        ctx.report_progress(progress, total=100)
    token = ctx.meta.progress_token
    return str(token) if token is not None else "Progress complete"


# -- diagnostics (server-stateless) ----------------------------------------------------


@django_mcp.tool(read_only=True)
def test_missing_capability(ctx: Context) -> str:
    """Needs the sampling capability: without it the call fails with -32021."""
    if "sampling" not in ctx.client_capabilities:
        raise MissingRequiredClientCapability({"sampling": {}})
    return "Success"


@django_mcp.tool(read_only=True)
def test_streaming_elicitation() -> str:
    """Answer on the request's own stream without sending the client any request."""
    return "No elicitation needed: this server never sends requests on a response stream."


@django_mcp.tool(read_only=True)
def test_logging_tool(ctx: Context) -> str:
    """Do some work; it logs only when the request opts in with a logLevel."""
    ctx.log("info", "Logging tool started", logger="conformance")
    return "Logging tool completed"


@django_mcp.tool(read_only=True)
def test_dynamic_tool() -> str:
    """A tool that test_trigger_tool_change re-registers to change the tool list."""
    return "Dynamic tool"


@django_mcp.tool
def test_trigger_tool_change(ctx: Context) -> str:
    """Re-register test_dynamic_tool, which changes the tool list."""
    site = ctx.site
    spec = site.get_tool("test_dynamic_tool")
    if spec is not None:
        site.unregister("test_dynamic_tool")
        site.add_tool(spec)
    else:
        site.tool(test_dynamic_tool)
    return "Mutation triggered"


# -- not scored at 2026-07-28 (http-custom-header-server-validation) ------------------------


@django_mcp.tool(read_only=True)
def test_header_param(
    region: Annotated[str, MCPHeader("Region"), Field(description="Mirrored in Mcp-Param-Region")],
) -> str:
    """Echo a string argument that the client mirrors in the Mcp-Param-Region header."""
    return f"Region: {region}"


@django_mcp.prompt
def test_dynamic_prompt() -> str:
    """A prompt that test_trigger_prompt_change re-registers to change the prompt list."""
    return "Dynamic prompt"


@django_mcp.tool
def test_trigger_prompt_change(ctx: Context) -> str:
    """Re-register test_dynamic_prompt, which changes the prompt list."""
    site = ctx.site
    if site.is_registered(test_dynamic_prompt):
        site.unregister(test_dynamic_prompt)
    site.prompt(test_dynamic_prompt)
    return "Mutation triggered"


# -- resources ------------------------------------------------------------------------

STATIC_TEXT = "This is the content of the static text resource."


@django_mcp.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A fixed text resource."""
    return STATIC_TEXT


@django_mcp.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A fixed binary resource: a 1x1 PNG."""
    return base64.b64decode(PNG_1X1)


@django_mcp.resource("test://template/{id}/data", name="template", mime_type="application/json")
def template_data(id: str) -> dict[str, Any]:
    """JSON data for any id."""
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


# -- prompts --------------------------------------------------------------------------

ARG1_SUGGESTIONS = ("test", "testValue1", "test-value", "example")


def complete_arg1(value: str) -> list[str]:
    """Suggest values for arg1 that start with what the user typed."""
    return [choice for choice in ARG1_SUGGESTIONS if choice.startswith(value)]


@django_mcp.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@django_mcp.prompt(complete={"arg1": complete_arg1})
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@django_mcp.prompt
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[Message]:
    """A prompt that embeds a resource."""
    return [
        user(
            EmbeddedResource(
                ResourceContents(
                    uri=resourceUri,
                    mime_type="text/plain",
                    text="Embedded resource content for testing.",
                )
            )
        ),
        user("Please process the embedded resource above."),
    ]


@django_mcp.prompt
def test_prompt_with_image() -> list[Message]:
    """A prompt that includes an image."""
    return [
        user(Image(PNG_1X1, mime_type="image/png")),
        user("Please analyze the image above."),
    ]


# -- multi round-trip requests (input_required) ------------------------------------------------

CAPITAL_QUESTION = "What is the capital of France?"


def _text_of(sampled: dict[str, Any]) -> str:
    content = sampled.get("content")
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return "(no text)"


@django_mcp.tool(read_only=True)
def test_input_required_result_elicitation(ctx: Context) -> str:
    """Ask the user for their name (elicitation, key user_name), then greet them."""
    answer = ctx.elicit("What is your name?", {"name": str}, key="user_name")
    if not answer.accepted or answer.content is None:
        return f"No name given ({answer.action})."
    return f"Hello, {answer.content.get('name')}!"


@django_mcp.tool(read_only=True)
def test_input_required_result_sampling(ctx: Context) -> str:
    """Ask the client's model a question (sampling, key capital_question)."""
    sampled = ctx.sample(CAPITAL_QUESTION, max_tokens=100, key="capital_question")
    return f"The model answered: {_text_of(sampled)}"


@django_mcp.tool(read_only=True)
def test_input_required_result_list_roots(ctx: Context) -> str:
    """Ask for the client's roots (roots/list, key client_roots)."""
    roots = ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(str(root.get("uri")) for root in roots)


@django_mcp.tool(read_only=True)
def test_input_required_result_request_state(ctx: Context) -> str:
    """Ask for a confirmation; the signed requestState carries the round."""
    answer = ctx.elicit("Confirm to continue.", {"ok": bool}, key="confirm")
    ok = answer.accepted and bool((answer.content or {}).get("ok"))
    return "state-ok" if ok else "state-not-confirmed"


@django_mcp.tool(read_only=True)
def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Ask for a name, a model greeting and the roots in one round."""
    answers = ctx.request_input(
        {
            "user_name": Elicit("What is your name?", {"name": str}),
            "greeting": Sample(
                [{"role": "user", "content": {"type": "text", "text": "Say hello."}}], 50
            ),
            "client_roots": ListRoots(),
        }
    )
    name = (answers["user_name"].content or {}).get("name")
    roots = len(answers["client_roots"])
    return f"Hello, {name}! The model said: {_text_of(answers['greeting'])}; {roots} root(s)."


@django_mcp.tool(read_only=True)
def test_input_required_result_multi_round(ctx: Context) -> str:
    """Ask for a name, then (in a second round) for a colour."""
    name = (ctx.elicit("What is your name?", {"name": str}, key="step1").content or {}).get("name")
    color = (ctx.elicit("Favourite colour?", {"color": str}, key="step2").content or {}).get(
        "color"
    )
    return f"{name} likes {color}."


@django_mcp.tool(read_only=True)
def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Ask for a confirmation; a tampered requestState is refused with -32602."""
    answer = ctx.elicit("Confirm to continue.", {"ok": bool}, key="confirm")
    return "confirmed" if answer.accepted else "not confirmed"


@django_mcp.tool(read_only=True)
def test_input_required_result_capabilities(ctx: Context) -> str:
    """Ask only in a way the client declared: elicitation, else sampling, else roots."""
    capabilities = ctx.client_capabilities
    request: InputRequest
    if "elicitation" in capabilities:
        request = Elicit("What is your name?", {"name": str})
    elif "sampling" in capabilities:
        request = Sample([{"role": "user", "content": {"type": "text", "text": "Name?"}}], 50)
    elif "roots" in capabilities:
        request = ListRoots()
    else:
        raise MissingRequiredClientCapability({"elicitation": {}})
    ctx.request_input({"input": request})
    return f"Answered through {request.method}."


@django_mcp.prompt
def test_input_required_result_prompt(ctx: Context) -> list[Message]:
    """A prompt that first asks the user for context (elicitation, key user_context)."""
    answer = ctx.elicit("What context should the prompt use?", {"context": str}, key="user_context")
    context = (answer.content or {}).get("context", "none")
    return [user(f"Use this context: {context}")]


# -- the Tasks extension (io.modelcontextprotocol/tasks; pending scenarios) -----------------


@django_mcp.tool(read_only=True)
def greet(name: str) -> str:
    """Greet someone by name (never a task)."""
    return f"Hello, {name}!"


@django_mcp.tool(read_only=True, task="optional")
def slow_compute(
    ctx: Context,
    # Bounded: a call asking for 10**30 seconds held a synchronous worker for good.
    seconds: Annotated[int, Field(ge=0, le=600)],
    label: str = "job",
) -> str:
    """Work for ``seconds`` seconds; a task for clients that declare the extension.

    It checks for cancellation ten times a second, so ``tasks/cancel`` stops it promptly.
    """
    for step in range(seconds * 10):
        ctx.report_progress(step, total=seconds * 10)  # raises once the task is cancelled
        time.sleep(0.1)
    return f"{label}: computed for {seconds}s"


@django_mcp.tool(task="required")
def failing_job() -> str:
    """Always ends with a tool error (a completed task whose result has isError: true)."""
    raise ToolError("failing_job failed on purpose")


@django_mcp.tool(task="required")
def protocol_error_job() -> str:
    """Always ends with a JSON-RPC-level error (a failed task)."""
    raise InvalidParams("protocol_error_job fails at the protocol level on purpose")


@django_mcp.tool(task="required", destructive=True)
def confirm_delete(ctx: Context, filename: str) -> str:
    """Ask the user to confirm, inside the task, before deleting ``filename``."""
    answer = ctx.elicit(f"Delete {filename}?", {"confirm": bool}, key="confirm_delete")
    if answer.accepted and (answer.content or {}).get("confirm"):
        return f"Deleted {filename}"
    return f"Kept {filename}"


@django_mcp.tool(task="required")
def multi_input(ctx: Context) -> str:
    """Ask two questions at once, inside the task; either may be answered first."""
    answers = ctx.request_input(
        {
            "first": Elicit("First answer?", {"name": str, "confirm": bool}),
            "second": Elicit("Second answer?", {"name": str, "confirm": bool}),
        }
    )
    names = [(answers[key].content or {}).get("name") for key in ("first", "second")]
    return "Received: " + ", ".join(str(name) for name in names)


@django_mcp.tool(
    task="required",
    task_inputs={"user_name": Elicit("What is your name?", {"name": str})},
)
def test_tool_with_task(ctx: Context) -> str:
    """Ask for a name synchronously (input_required), then greet as a task."""
    answer = ctx.elicit("What is your name?", {"name": str}, key="user_name")
    content = answer.content or {}
    return f"Hello, {content.get('name') or content.get('user_name')}, from a task!"


# -- JSON Schema 2020-12 (json-schema-2020-12, pending) --------------------------------------

CONTACT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@django_mcp.tool(
    read_only=True,
    input_schema=CONTACT_SCHEMA,
    description="Tool with JSON Schema 2020-12 features",
)
def json_schema_2020_12_tool(
    name: str | None = None,
    address: dict[str, Any] | None = None,
    contactMethod: str | None = None,
    phone: str | None = None,
    email: str | None = None,
) -> str:
    """Echo the contact details, which CONTACT_SCHEMA has already validated."""
    given = {"name": name, "address": address, "contactMethod": contactMethod}
    given.update(phone=phone, email=email)
    details = {key: value for key, value in given.items() if value is not None}
    return f"Contact: {json.dumps(details, sort_keys=True)}"
