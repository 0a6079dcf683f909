"""Tools are plain functions: the name, docstring and type hints make the definition."""

from typing import Annotated

from pydantic import Field

import django_mcp


@django_mcp.tool(read_only=True, idempotent=True)
def convert_temperature(
    celsius: Annotated[float, Field(description="Degrees Celsius.")],
    precision: Annotated[int, Field(ge=0, le=4, description="Decimal places.")] = 1,
) -> str:
    """Convert a temperature from Celsius to Fahrenheit."""
    return f"{round(celsius * 9 / 5 + 32, precision)} °F"


@django_mcp.tool(name="shout", title="Shout")
async def shout_text(text: str) -> str:
    """Repeat the text in capitals. Async tools are awaited."""
    return text.upper() + "!"
