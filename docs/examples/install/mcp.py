# books/mcp.py: imported at startup, like admin.py
from typing import Annotated

from pydantic import Field

import django_mcp

from .models import Book


@django_mcp.tool(read_only=True)
def count_books(
    title_contains: Annotated[str, Field(description="Part of the title, any case.")] = "",
) -> str:
    """Count the books whose title contains some text."""
    count = Book.objects.filter(title__icontains=title_contains).count()
    return f"{count} book(s) found."
