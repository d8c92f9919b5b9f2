"""The help desk's two lookups: an order by its id, a shop by its city."""

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
def get_shop(world: World, city: str) -> dict[str, Any]:
    """Look up the shop in a city: its street address, phone number and manager.

    Args:
        city: The city.
    """
    shop = world["shops"].get(city.strip().title())
    if shop is None:
        raise ToolError(f"no shop in {city}", kind="not_found")
    return {"city": city, **shop}
