"""Ask the user mid-call: the tool answers input_required, and the client calls again."""

from pydantic import BaseModel

import django_mcp
from django_mcp import Context


class Confirmation(BaseModel):
    confirm: bool


@django_mcp.tool(destructive=True)
def cancel_order(order_id: int, ctx: Context) -> str:
    """Cancel an order once the user confirms."""
    answer = ctx.elicit(f"Cancel order {order_id}?", Confirmation)
    if not answer.accepted or not answer.data.confirm:
        return f"Order {order_id} was kept."
    # Act only after every question: the function runs from the top on each round.
    return f"Order {order_id} is cancelled."
