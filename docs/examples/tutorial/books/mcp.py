# books/mcp.py
# [docs:imports]
from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, Field

import django_mcp
from django_mcp import Context, ToolError

from .models import Author, Book

# [/docs:imports]


# [docs:first-tool]
@django_mcp.tool(read_only=True)
def count_books() -> str:
    """Count the books in the catalogue."""
    return f"The catalogue has {Book.objects.count()} books."


# [/docs:first-tool]


# [docs:search]
class BookOut(BaseModel):
    isbn: str
    title: str
    author: str
    price: Decimal


def book_out(book: Book) -> BookOut:
    return BookOut(isbn=book.isbn, title=book.title, author=book.author.name, price=book.price)


@django_mcp.tool(read_only=True)
def search_books(
    query: Annotated[str, Field(description="Text to look for in titles.")],
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> list[BookOut]:
    """Find books whose title contains the query."""
    books = Book.objects.select_related("author").filter(title__icontains=query)[:limit]
    return [book_out(book) for book in books]


# [/docs:search]


# [docs:get-book]
@django_mcp.tool(read_only=True)
def get_book(isbn: str) -> BookOut:
    """Look up one book by its ISBN."""
    book = Book.objects.select_related("author").filter(isbn=isbn).first()
    if book is None:
        raise ToolError(f"No book has ISBN {isbn}. Use search_books to find one.")
    return book_out(book)


# [/docs:get-book]


# [docs:whoami]
@django_mcp.tool(read_only=True)
def whoami(ctx: Context) -> str:
    """Say which client is calling and which revision it declared."""
    client = ctx.client_info.name if ctx.client_info else "an unnamed client"
    return f"You are {client}, speaking MCP {ctx.declared_revision}."


# [/docs:whoami]


# [docs:modeltools]
@django_mcp.register(Author)
class AuthorTools(django_mcp.ModelTools):
    """Authors as tools, the way a ModelAdmin shows them: author_list and author_get."""

    fields = ["id", "name"]
    search_fields = ["name"]


# [/docs:modeltools]
