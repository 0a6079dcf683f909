"""The demo bookshop's MCP declarations: autodiscovered like admin.py."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field

import django_mcp
from django_mcp import Context, ToolError

from .models import Author, Book


class BookOut(BaseModel):
    isbn: str
    title: str
    author: str
    price: Decimal


#: What a client may send as an ISBN: checked before any query, so garbage (a NUL, which
#: PostgreSQL refuses in a query, or a megabyte of text) is an invalid argument, not an
#: internal error.
ISBN = Annotated[str, Field(pattern=r"^[0-9]{13}$", description="13-digit ISBN.")]


def _no_nul(text: str) -> str:
    """Refuse NUL, as Django's forms do: PostgreSQL refuses it in a query."""
    if "\x00" in text:
        raise ValueError("must not contain NUL characters")
    return text


def _out(book: Book) -> BookOut:
    return BookOut(isbn=book.isbn, title=book.title, author=book.author.name, price=book.price)


@django_mcp.tool(read_only=True, open_world=False)
def search_books(
    query: Annotated[
        str,
        # SQLite refuses a LIKE pattern over 50,000 bytes.
        Field(max_length=200, description="Text to look for in titles."),
        AfterValidator(_no_nul),
    ],
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> list[BookOut]:
    """Find books whose title contains the query."""
    books = Book.objects.select_related("author").filter(title__icontains=query)[:limit]
    return [_out(book) for book in books]


@django_mcp.tool(read_only=True, open_world=False)
def get_book(isbn: ISBN) -> BookOut:
    """Look up one book by its ISBN."""
    book = Book.objects.select_related("author").filter(isbn=isbn).first()
    if book is None:
        raise ToolError(f"No book has ISBN {isbn}.")
    return _out(book)


# [docs:demo-write]
@django_mcp.tool(idempotent=True, open_world=False, scopes_required="books:write")
def set_price(
    isbn: ISBN, price: Annotated[Decimal, Field(gt=0, max_digits=8, decimal_places=2)]
) -> BookOut:
    """Change a book's price. Needs a token with the books:write scope."""
    book = Book.objects.select_related("author").filter(isbn=isbn).first()
    if book is None:
        raise ToolError(f"No book has ISBN {isbn}.")
    book.price = price
    book.save(update_fields=["price"])
    return _out(book)


# [/docs:demo-write]


@django_mcp.tool(read_only=True)
def whoami(ctx: Context) -> str:
    """Say which client is calling and which revision it declared."""
    client = ctx.client_info.name if ctx.client_info else "an unnamed client"
    return f"You are {client}, speaking MCP {ctx.declared_revision}."


# [docs:demo-resources]
@django_mcp.resource("bookshop://about", mime_type="text/markdown", ttl_ms=3_600_000)
def about() -> str:
    """What this bookshop is, and how many books it has."""
    return f"# The demo bookshop\n\n{Book.objects.count()} books in the catalogue.\n"


def isbns_starting_with(value: str) -> list[str]:
    """Complete an ISBN from what the user typed so far (nothing for what no ISBN starts
    with: a value is any text the client sends)."""
    if not re.fullmatch(r"[0-9]{0,13}", value):
        return []
    return list(
        Book.objects.filter(isbn__startswith=value)
        .order_by("isbn")
        .values_list("isbn", flat=True)[:100]
    )


@django_mcp.resource(
    "books://{isbn}", mime_type="application/json", complete={"isbn": isbns_starting_with}
)
def book(isbn: ISBN) -> BookOut:
    """One book of the catalogue, as JSON."""
    return _out(Book.objects.select_related("author").get(isbn=isbn))


@django_mcp.prompt(complete={"isbn": isbns_starting_with})
def review_request(
    isbn: Annotated[ISBN, Field(description="ISBN of the book to review.")],
    tone: Literal["friendly", "critical", "neutral"] = "neutral",
) -> list[django_mcp.Message]:
    """Ask the model for a short review of one book."""
    book = Book.objects.select_related("author").get(isbn=isbn)
    return [
        django_mcp.user(f"Write a {tone} review of '{book.title}' by {book.author.name}."),
    ]


# [/docs:demo-resources]


# [docs:demo-modeltools]
@django_mcp.register(Author)
class AuthorTools(django_mcp.ModelTools):
    """Authors: read by anyone; writes need the model's own permissions, as in the admin,
    and a token with the books:write scope (a signed-in session is not scope-limited)."""

    fields = ["id", "name"]
    resource_uri = "authors://{id}"
    actions = ["list", "get", "create", "update", "delete"]
    search_fields = ["name"]
    permission_required = {
        "create": "books.add_author",
        "update": "books.change_author",
        "delete": "books.delete_author",
    }
    scopes_required = {action: "books:write" for action in ("create", "update", "delete")}


# [/docs:demo-modeltools]


@django_mcp.tool(read_only=True, open_world=False, task="optional")
def stock_report(ctx: Context) -> str:
    """Count the books per author; a task for clients that support MCP tasks (the demo's
    worker, ``manage.py db_worker``, runs it)."""
    authors = list(Author.objects.order_by("name"))
    lines = []
    for done, author in enumerate(authors, start=1):
        ctx.report_progress(done, total=len(authors), message=f"{author.name}")
        lines.append(f"{author.name}: {Book.objects.filter(author=author).count()}")
    return "\n".join(lines) or "No books."
