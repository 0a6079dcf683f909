"""Argument completion for the bookshop (docs/guides/completion.md); tests/test_completion.py
runs this file.

In a project these live in an app's ``mcp.py`` on the default site: write
``@django_mcp.prompt(...)`` / ``@django_mcp.resource(...)`` where this file writes
``@site.prompt(...)`` / ``@site.resource(...)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from django.urls import path

from django_mcp.sites import MCPSite
from testproject.books.models import Author, Book

site = MCPSite(name="completion-example")


# [docs:completers]
# A completer receives what it asks for by name: ``value`` (typed so far), ``arguments``
# (earlier values, from context.arguments), ``argument`` (the name) and ``ctx``. It returns
# strings, best first; the server sends the first 100 with the total and hasMore. Return a
# QuerySet as it is: the server fetches 101 rows and counts the rest in SQL.
def author_names(value: str) -> Iterable[str]:
    """Authors whose name starts with what was typed."""
    authors = Author.objects.filter(name__istartswith=value).order_by("name")
    return authors.values_list("name", flat=True)


def titles(value: str, arguments: dict[str, str]) -> Iterable[str]:
    """Titles starting with what was typed, by the author chosen before, if any."""
    books = Book.objects.filter(title__istartswith=value)
    if "author" in arguments:
        books = books.filter(author__name=arguments["author"])
    return books.order_by("title").values_list("title", flat=True)


LANGUAGES = ["English", "French", "German", "Spanish"]


# Completers may be async.
async def languages(value: str) -> list[str]:
    """Languages we translate into."""
    return [name for name in LANGUAGES if name.lower().startswith(value.lower())]


# [/docs:completers]


# [docs:template]
# Resource template variables complete like prompt arguments.
@site.resource(
    "books://by/{author}/{title}",
    mime_type="application/json",
    complete={"author": author_names, "title": titles},
)
def book_by(author: str, title: str) -> dict[str, Any]:
    """A book, named by its author and title."""
    book = Book.objects.get(author__name=author, title=title)
    return {"isbn": book.isbn, "title": book.title, "author": author}


# [/docs:template]


# [docs:prompt]
# A Literal (or Enum) argument completes from its choices without a completer.
@site.prompt(complete={"title": titles, "language": languages})
def translate(title: str, language: str, tone: Literal["formal", "casual"] = "formal") -> str:
    """Ask for a translation of a book's blurb."""
    return f"Translate the blurb of '{title}' into {language}, in a {tone} tone."


# [/docs:prompt]


urlpatterns = [path("mcp", site.urls)]
