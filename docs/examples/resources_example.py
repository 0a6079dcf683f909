"""Resources for the bookshop (docs/guides/resources.md); tests/test_resources.py and
tests/test_files.py run this file.

In a project these live in an app's ``mcp.py`` on the default site: write
``@django_mcp.resource(...)`` where this file writes ``@site.resource(...)``.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from django.urls import path

from django_mcp import Annotations, Context
from django_mcp.declarations.files import directory_resource
from django_mcp.sites import MCPSite
from testproject.books.models import Book

site = MCPSite(name="resources-example")

LOGO_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


# [docs:fixed]
# A fixed URI: listed by resources/list. A str is served as text.
@site.resource(
    "bookshop://about",
    title="About the bookshop",
    mime_type="text/markdown",
    annotations=Annotations(audience=["user", "assistant"], priority=0.9),
    icons=[{"src": "https://bookshop.example/icon.png", "mimeType": "image/png"}],
    ttl_ms=3_600_000,  # clients may reuse it for an hour
)
def about() -> str:
    """Who we are and when we open."""
    return "# The bookshop\n\nOpen every day from nine to six."


# bytes are served as a base64 blob.
@site.resource("bookshop://logo.png", mime_type="image/png", size=len(LOGO_PNG))
def logo() -> bytes:
    """The shop's logo."""
    return LOGO_PNG


# [/docs:fixed]


# [docs:template]
# A template (RFC 6570): listed by resources/templates/list. Its variables are the
# function's parameters. Other values are served as JSON. DoesNotExist means not found.
@site.resource("books://{isbn}", mime_type="application/json")
def book(isbn: str) -> dict[str, Any]:
    """One book of the catalogue."""
    found = Book.objects.select_related("author").get(isbn=isbn)
    return {"isbn": found.isbn, "title": found.title, "author": found.author.name}


# [/docs:template]


# [docs:private]
# Contents that depend on who asks: say so, so that shared caches do not reuse them.
@site.resource("bookshop://me", cache_scope="private")
def me(ctx: Context) -> str:
    """Who the bookshop thinks you are."""
    user = ctx.user
    return user.get_username() if user is not None and user.is_authenticated else "anonymous"


# [/docs:private]


# [docs:files]
# Every file below a directory, e.g. shelf://policies/returns.txt; ``../`` and symlinks
# that lead out of the directory are refused as not found.
directory_resource(
    site,
    "shelf://{+path}",
    Path(__file__).resolve().parent / "shelf",
    name="shelf",
    description="The shop's notices and policies.",
)
# [/docs:files]

urlpatterns = [path("mcp", site.urls)]
