"""The ``streams`` site: declarations the stream tests call, served at ``/streams/mcp`` by
``tests/streams/urls.py`` (in-process and in the live servers).

It is a dedicated :class:`~django_mcp.sites.MCPSite` (the default site is not touched) and
is marked ``serving`` so runtime registration changes are announced, as they are for
autodiscovered sites.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Literal

from django.db import transaction
from pydantic import BaseModel, Field

from django_mcp import Context, ToolError
from django_mcp.declarations.prompts import Message, user
from django_mcp.exceptions import RequestCancelled
from django_mcp.listen.fanout import (
    channel_layer,
    group_name,
    notify_prompts_changed,
    notify_resource_updated,
    notify_resources_changed,
    notify_tools_changed,
)
from django_mcp.sites import MCPSite
from testproject.books.models import Author

site = MCPSite(name="streams")


def record(path: str, line: str) -> None:
    """Append one line to ``path``: how a test outside the server sees a handler's steps."""
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")


# -- progress, logs and cancellation ---------------------------------------------------


# [docs:sync-progress]
@site.tool
def count_slowly(ctx: Context, path: str, steps: int = 400, pause: float = 0.02) -> str:
    """Report progress at every step (a sync handler), recording each step in ``path``."""
    record(path, "started")
    try:
        for step in range(1, steps + 1):
            ctx.report_progress(step, total=steps, message=f"step {step}")
            record(path, f"step {step}")
            time.sleep(pause)
    except RequestCancelled:
        record(path, "cancelled")
        raise
    record(path, "finished")
    return "counted"


# [/docs:sync-progress]


@site.tool
def late_progress(ctx: Context, path: str, delay: float = 0.5, steps: int = 100) -> str:
    """Wait ``delay`` before the first progress report, then count like count_slowly."""
    record(path, "started")
    time.sleep(delay)
    return count_slowly(ctx, path, steps=steps)


# [docs:async-cancel]
@site.tool
async def wait_async(ctx: Context, path: str, seconds: float = 10.0) -> str:
    """Report progress once, then wait (an async handler), recording what happens."""
    record(path, "started")
    ctx.report_progress(1, total=2)
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        record(path, "cancelled")
        raise
    record(path, "finished")
    return "waited"


# [/docs:async-cancel]


@site.tool
def quiet_until(ctx: Context, path: str, guard: float = 10.0) -> str:
    """Report nothing until the file ``path`` exists (the test creates it), then answer;
    give up waiting after ``guard`` seconds, so that a test cannot hang on it."""
    deadline = time.monotonic() + guard
    while not Path(path).exists() and time.monotonic() < deadline:
        ctx.check_cancelled()
        time.sleep(0.01)
    return "spoke"


@site.tool
def pulse(ctx: Context, seconds: float) -> str:
    """Report progress, wait ``seconds`` (a sync handler), report again."""
    ctx.report_progress(1, total=2)
    time.sleep(seconds)
    ctx.report_progress(2, total=2)
    return "pulsed"


@site.tool
def progress_values(ctx: Context, values: list[float]) -> str:
    """Report each of ``values`` as progress (the context drops values that do not rise)."""
    for value in values:
        ctx.report_progress(value)
    return "reported"


@site.tool
def progress_burst(ctx: Context, count: int) -> str:
    """Report 1 to ``count``, each with a message, as fast as it can (a tight loop)."""
    for step in range(1, count + 1):
        ctx.report_progress(step, total=count, message=f"step {step}")
    return "reported"


@site.tool
def progress_with_pauses(ctx: Context, values: list[float], pauses: list[float]) -> str:
    """Report each of ``values``, sleeping the matching entry of ``pauses`` after it."""
    for value, pause in zip(values, pauses, strict=True):
        ctx.report_progress(value)
        time.sleep(pause)
    return "reported"


@site.tool
def progress_mistakes(ctx: Context) -> str:
    """Report 1, then values a progress notification cannot carry (each refused in the
    tool, its message kept), then 2."""
    ctx.report_progress(1)
    refused = []
    for args, kwargs in [
        ((float("nan"),), {}),
        ((float("inf"),), {}),
        (("50%",), {}),
        ((True,), {}),
        ((1.5,), {"total": float("nan")}),
        ((1.5,), {"message": 5}),
    ]:
        try:
            ctx.report_progress(*args, **kwargs)
        except (TypeError, ValueError) as exc:
            refused.append(str(exc))
    ctx.report_progress(2)
    return "\n".join(refused)


# [docs:log]
@site.tool
def chatty(ctx: Context) -> str:
    """Log one message at every level, lowest first."""
    for level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"):
        ctx.log(level, f"{level} message", logger="streams")
    return "logged"


# [/docs:log]


# -- runtime registration and change notifications --------------------------------------


def ephemeral() -> str:
    """A tool that toggle_tool adds and removes at run time."""
    return "here"


def ephemeral_prompt() -> str:
    """A prompt that toggle_prompt adds and removes at run time."""
    return "here"


# [docs:toggle]
@site.tool
def toggle_tool(ctx: Context) -> str:
    """Register ``ephemeral`` if it is absent, else unregister it."""
    if ctx.site.is_registered(ephemeral):
        ctx.site.unregister(ephemeral)
        return "removed"
    ctx.site.tool(ephemeral)
    return "added"


# [/docs:toggle]


@site.tool
def toggle_prompt(ctx: Context) -> str:
    """Register ``ephemeral_prompt`` if it is absent, else unregister it."""
    if ctx.site.is_registered(ephemeral_prompt):
        ctx.site.unregister(ephemeral_prompt)
        return "removed"
    ctx.site.prompt(ephemeral_prompt)
    return "added"


# [docs:notify]
@site.tool
def notify(kind: Literal["tools", "prompts", "resources", "updated"], uri: str = "") -> str:
    """Call one of the ``notify_*`` functions for this site."""
    if kind == "tools":
        notify_tools_changed(site=site)
    elif kind == "prompts":
        notify_prompts_changed(site=site)
    elif kind == "resources":
        notify_resources_changed(site=site)
    else:
        notify_resource_updated(uri, site=site)
    return "sent"


# [/docs:notify]


@site.tool
async def notify_async(ctx: Context) -> str:
    """Call ``notify_tools_changed`` (a sync function) from an async tool."""
    ctx.report_progress(1)
    notify_tools_changed(site=site)
    return "sent"


# [docs:save]
@site.tool
def save_author(name: str, fail: bool = False) -> int:
    """Create an Author in a transaction; ``fail`` rolls it back. ``Author`` is a ModelTools
    model with ``resource_uri = "authors://{id}"`` on the default site."""
    try:
        with transaction.atomic():
            author = Author.objects.create(name=name)
            if fail:
                raise ValueError("roll back")
    except ValueError as exc:
        raise ToolError("rolled back") from exc
    return int(author.pk)


# [/docs:save]


@site.tool
def listeners() -> int:
    """How many listen streams of this site this process holds (in-memory channel layer
    only; -1 with another layer)."""
    groups = getattr(channel_layer(), "groups", None)
    if groups is None:
        return -1
    return len(groups.get(group_name(site.name), {}))


# -- multi round-trip requests -----------------------------------------------------------


class Booking(BaseModel):
    seats: int = Field(ge=1, le=8)
    window: bool = False


@site.tool
def book_seats(ctx: Context) -> str:
    """Ask for a booking with a pydantic model: the answer is validated into ``data``."""
    answer = ctx.elicit("How many seats?", Booking, key="booking")
    if not answer.accepted:
        return "no booking"
    booking: Booking = answer.data
    return f"{booking.seats} seat(s), window={booking.window}"


# [docs:url]
@site.tool
def connect_account(ctx: Context) -> str:
    """Send the user to a URL (URL-mode elicitation), then report what they chose."""
    answer = ctx.elicit_url("Connect your account", "https://example.com/connect?flow=42")
    return f"url {answer.action}"


# [/docs:url]


# [docs:rounds]
@site.tool
def two_questions(ctx: Context, topic: str) -> str:
    """Ask a name, then (next round) a colour; both answers travel in requestState."""
    name = (ctx.elicit("Name?", {"name": str}, key="name").content or {}).get("name")
    color = (ctx.elicit("Colour?", {"color": str}, key="color").content or {}).get("color")
    return f"{name} likes {color} ({topic})"


# [/docs:rounds]


# [docs:prompt]
@site.prompt
def confirm_prompt(ctx: Context) -> list[Message]:
    """A prompt that first asks for a tone."""
    answer = ctx.elicit("Which tone?", {"tone": str}, key="tone")
    return [user(f"Tone: {(answer.content or {}).get('tone', 'none')}")]


# [/docs:prompt]


@site.tool(name="confirm_prompt")
def confirm_tool(ctx: Context) -> str:
    """A tool named like the prompt ``confirm_prompt``, asking the same question."""
    answer = ctx.elicit("Which tone?", {"tone": str}, key="tone")
    return f"Tone: {(answer.content or {}).get('tone', 'none')}"


# [docs:resource]
@site.resource("secret://{name}", mime_type="text/plain", ttl_ms=60_000, cache_scope="public")
def secret(ctx: Context, name: str) -> str:
    """A resource that asks for a confirmation before it is read."""
    answer = ctx.elicit("Reveal the secret?", {"ok": bool}, key="confirm")
    return f"secret {name}" if answer.accepted else "hidden"


# [/docs:resource]


@site.resource("plain://note", mime_type="text/plain", ttl_ms=60_000, cache_scope="public")
def plain_note() -> str:
    """A resource that never asks for input."""
    return "note"


@site.resource("staff://{name}", mime_type="text/plain", permission_required="books.view_author")
def staff_note(name: str) -> str:
    """A resource only callers with ``books.view_author`` may read (or hear about)."""
    return f"staff note {name}"


@site.resource("scoped://{name}", mime_type="text/plain", scopes_required="notes:read")
def scoped_note(name: str) -> str:
    """A resource a token reads (or hears about) only with the ``notes:read`` scope."""
    return f"scoped note {name}"


site.serving = True

#: A site with tools only: it cannot deliver prompt or resource notifications.
tools_only = MCPSite(name="streams-tools-only")


@tools_only.tool
def lonely() -> str:
    """The only declaration of the tools-only site."""
    return "alone"


tools_only.serving = True
