"""Ask for the request's Context by annotating a parameter; it is not part of the schema."""

from typing import Annotated

from pydantic import Field

import django_mcp
from django_mcp import Context


@django_mcp.tool(read_only=True)
def whoami(ctx: Context) -> str:
    """Describe the caller: Django user, MCP client and declared protocol revision."""
    user = ctx.user.get_username() if ctx.user and ctx.user.is_authenticated else "anonymous"
    client = ctx.client_info.name if ctx.client_info else "an unnamed client"
    return f"{user} via {client}, MCP {ctx.declared_revision}"


@django_mcp.tool
def count_to(number: Annotated[int, Field(ge=1, le=100)], ctx: Context) -> str:
    """Count, reporting progress when the client asked for it (a no-op otherwise)."""
    for done in range(1, number + 1):
        ctx.report_progress(done, total=number, message=f"{done} of {number}")
    return f"Counted to {number}."
