"""A small rule-based support agent for the retail example, on toolproof's Python interface.

It is an "order desk": it authenticates the customer by email or phone, then answers where
an order is (by the warehouse ERP, the status of record), what was charged, and whether a
refund went through. It changes nothing: any other request gets a polite no. No model is
involved, so it is quick and repeatable, and it shows the interface a real agent would use:

    async def agent(conversation: Conversation, tools: ToolHandle) -> str

Run it against the retail suite (`--k 1` because one trial per task):

    toolproof run examples/retail --agent python:examples/agents/simple_agent.py:agent \\
        --tasks lookup --trials 1 --k 1
"""

from __future__ import annotations

import re
from typing import Any

from toolproof.agents.external import Conversation, ToolHandle

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"\+?\d?[\s.-]?\(?\d{3}\)?[\s.-]*\d{3}[\s.-]*\d{4}")
ORDER = re.compile(r"\bW\d{5}\b")
CHANGES = ("please cancel", "cancel my", "exchange", "return label", "change the address",
           "discount", "text me", "send me a text")  # fmt: skip
ERP_STATUS = {
    "PICK": "being packed at our warehouse",
    "SHPD": "shipped",
    "DLVD": "delivered",
    "RTS": "returned to sender: it came back to our warehouse as undeliverable",
    "HOLD": "on hold at our warehouse",
    "CANC": "cancelled",
}
STORE_STATUS = {"pending": "PEND", "processing": "PICK", "shipped": "SHPD", "delivered": "DLVD"}


async def agent(conversation: Conversation, tools: ToolHandle) -> str:
    """Answer the latest user message, looking up what it needs through `tools`."""
    everything = " ".join(conversation.user_messages)
    latest = conversation.latest.lower()
    if any(phrase in latest for phrase in CHANGES):
        return (
            "I'm the order desk: I can tell you where an order is and what was charged, "
            "but I can't make changes. A colleague will help you with that."
        )
    if conversation.state.get("answered"):
        return "You're welcome. Have a great day!"

    customer = await authenticate(everything, tools)
    if customer is None:
        return "Happy to help. First, what is the email address on your account?"
    if "error" in customer:
        return "I couldn't find an account with that email or phone number. Could you check it?"

    wants_refund = "refund" in latest
    order_id = await choose_order(everything, customer, tools, cancelled=wants_refund)
    if order_id is None:
        return "I couldn't find an order on your account. Which order number is it?"
    order = await tools.call("get_order", {"order_id": order_id})
    if "error" in order:
        return f"I couldn't find order {order_id}. Could you check the number?"
    if order.get("customer_id") != customer["customer_id"]:
        return f"Order {order_id} isn't on your account, so I can't discuss it."

    conversation.state["answered"] = True
    if wants_refund:
        return await refund_status(order_id, tools)
    if any(word in latest for word in ("charged", "card", "paid", "pay ")):
        return await payment(order_id, tools)
    return await where_is(order_id, order, tools)


async def authenticate(text: str, tools: ToolHandle) -> dict[str, Any] | None:
    """The customer's account by the email or phone they gave; None when they gave none."""
    if match := EMAIL.search(text):
        found: dict[str, Any] = await tools.call("find_customer", {"email": match.group()})
        return found
    if match := PHONE.search(text):
        found = await tools.call("find_customer", {"phone": match.group().strip()})
        return found
    return None


async def choose_order(
    text: str, customer: dict[str, Any], tools: ToolHandle, cancelled: bool
) -> str | None:
    """The order the user named, else their newest (cancelled, for a refund question)."""
    named = ORDER.findall(text)
    if named:
        return str(named[-1])
    arguments = {"customer_id": customer["customer_id"]}
    if cancelled:
        arguments["status"] = "cancelled"
    listed = await tools.call("list_orders", arguments)
    orders = listed.get("orders") if isinstance(listed, dict) else None
    return str(orders[0]["order_id"]) if orders else None


async def where_is(order_id: str, order: dict[str, Any], tools: ToolHandle) -> str:
    """Status by the ERP, with dates, carrier and tracking; says so when the shop lags."""
    erp = await tools.call("erp_lookup", {"order_no": order_id})
    if "error" in erp:
        return f"Your order {order_id} is {order['status']}; it hasn't left our warehouse yet."
    code = erp.get("SHIP_STAT", "")
    parts = [f"Your order {order_id} is {ERP_STATUS.get(code, code.lower())}."]
    if code == "DLVD" and erp.get("DLV_DT"):
        parts.append(f"It was delivered on {day(erp['DLV_DT'])}.")
    elif code == "SHPD" and erp.get("SHIP_DT"):
        parts.append(f"It shipped on {day(erp['SHIP_DT'])}.")
    if erp.get("TRACK_NO"):
        shipper = carrier(erp.get("CARRIER", ""))
        parts.append(f"Carrier {shipper}, tracking number {erp['TRACK_NO']}.")
    if STORE_STATUS.get(str(order.get("status"))) not in (None, code):
        parts.append("Our order page is behind: the warehouse record is the one to go by.")
    return " ".join(parts)


async def payment(order_id: str, tools: ToolHandle) -> str:
    charge = await tools.call("get_payment", {"order_id": order_id})
    if "error" in charge:
        return f"I couldn't read the payment of order {order_id} just now."
    return f"You were charged ${charge['amount']:.2f} for order {order_id}, {method(charge)}."


async def refund_status(order_id: str, tools: ToolHandle) -> str:
    charge = await tools.call("get_payment", {"order_id": order_id})
    if "error" in charge:
        return f"I couldn't read the payment of order {order_id} just now."
    refunds = charge.get("refunds") or []
    if not refunds:
        return f"There is no refund on order {order_id} yet."
    lines = [
        f"A refund of ${r['amount']:.2f} for order {order_id} went through on {r['created']}, "
        f"back to {method(charge)}."
        for r in refunds
    ]
    return " ".join(lines)


def method(charge: dict[str, Any]) -> str:
    pm = charge.get("payment_method") or {}
    if pm.get("type") == "card":
        return f"on the {str(pm.get('brand', '')).title()} card ending in {pm.get('last4')}"
    return f"on your {pm.get('type', 'original payment method')}"


def day(yyyymmdd: str) -> str:
    return f"{yyyymmdd[:4]}-{yyyymmdd[4:6]}-{yyyymmdd[6:8]}"


def carrier(code: str) -> str:
    return {"FEDEX": "FedEx", "UPS": "UPS", "USPS": "USPS", "DHL": "DHL"}.get(code, code)
