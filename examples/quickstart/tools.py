"""The help desk's three lookups: an order by its id, today's closing time, the month's
discount code."""

from __future__ import annotations

from typing import Any

from toolproof.tools import ToolError, tool
from toolproof.world import World


@tool
def get_order(world: World, order_id: str) -> dict[str, Any]:
    """Look up an order: its status, carrier, tracking number and total.

    Args:
        order_id: The order id.
    """
    order = world["orders"].get(order_id.strip().upper())
    if order is None:
        raise ToolError(f"no order {order_id}", kind="not_found")
    return {"order_id": order_id, **order}


@tool
def get_closing_time(world: World) -> str:
    """When the shop closes today.

    The answer is a sentence: a 135M-parameter model repeats a sentence to the customer far
    more often than it picks a value out of a JSON object.
    """
    return f"The shop closes at {world['desk']['today']['closes']} today."


@tool
def get_discount_code(world: World) -> str:
    """This month's discount code."""
    return f"This month's discount code is {world['desk']['today']['discount_code']}."
