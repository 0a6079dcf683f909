"""ToolError: a failure the model should read and recover from (isError: true)."""

import django_mcp
from django_mcp import ToolError


@django_mcp.tool(read_only=True)
def divide(dividend: float, divisor: float) -> str:
    """Divide two numbers."""
    if divisor == 0:
        raise ToolError("Cannot divide by zero: pass a divisor other than 0.")
    return str(dividend / divisor)
