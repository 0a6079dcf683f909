"""Prompts for the bookshop (docs/guides/prompts.md); tests/test_prompts.py runs this file.

In a project these live in an app's ``mcp.py`` on the default site: write
``@django_mcp.prompt`` where this file writes ``@site.prompt``.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Literal

from django.urls import path
from pydantic import Field

from django_mcp import (
    Annotations,
    Audio,
    EmbeddedResource,
    Image,
    Message,
    ResourceContents,
    assistant,
    user,
)
from django_mcp.sites import MCPSite
from testproject.books.models import Book

site = MCPSite(name="prompts-example")

#: A 1x1 PNG and a tiny WAV file, as bytes.
COVER_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
CHIME_WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")


# [docs:string]
# A prompt that returns a string: one user message with that text.
@site.prompt
def greeting() -> str:
    """Start a conversation with the bookshop's assistant."""
    return "Hello! Which books would you recommend this week?"


# [/docs:string]


# [docs:arguments]
# Arguments: the client sends strings; type hints convert and validate them. A parameter
# without a default is a required argument. Field(description=...) describes it.
@site.prompt(title="Review a book")
def review(
    isbn: Annotated[str, Field(description="ISBN of the book to review.")],
    tone: Literal["friendly", "critical", "neutral"] = "neutral",
) -> list[Message]:
    """Ask the model for a short review of one book."""
    book = Book.objects.select_related("author").get(isbn=isbn)  # DoesNotExist: -32602
    return [
        user(f"Write a {tone} review of '{book.title}' by {book.author.name}."),
        assistant("Here is a short review:"),
    ]


# [/docs:arguments]


# [docs:content]
# Other content: images, audio and embedded resources, with optional annotations.
@site.prompt
def describe_cover(isbn: str) -> list[Message]:
    """Show the model a book's cover and its catalogue entry, then ask about both."""
    book = Book.objects.get(isbn=isbn)
    entry = json.dumps({"isbn": book.isbn, "title": book.title})
    return [
        user(Image(COVER_PNG, mime_type="image/png")),
        user(
            EmbeddedResource(
                ResourceContents(f"books://{book.isbn}", text=entry, mime_type="application/json"),
                annotations=Annotations(audience=["assistant"], priority=0.8),
            )
        ),
        user("Does this cover suit the book?"),
    ]


@site.prompt
def announce(title: str) -> list[Message]:
    """Play a chime, then announce a new arrival."""
    return [user(Audio(CHIME_WAV, mime_type="audio/wav")), user(f"New arrival: {title}!")]


# [/docs:content]


urlpatterns = [path("mcp", site.urls)]
