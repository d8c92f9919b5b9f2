"""The support agent's tools: the storefront, payments, SMS, inventory, loyalty and the ERP.

Each tool stands for a service a real support team calls:

- order management (Shopify-like): customers, orders, addresses, cancellations, returns
- payments (Stripe-like): charges and refunds
- SMS (Twilio-like): registered message templates only, so every text is pre-approved
- inventory, recommendations and loyalty: homegrown services
- the legacy ERP: the warehouse's own record of shipping, terse and upper case

The services check what they would check in production (an order that has shipped cannot be
cancelled, an out-of-stock variant cannot be sent) and nothing more: which refunds, discounts
and exchanges are allowed is the support policy's business, and so the agent's.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from toolproof.tools import ToolError, tool
from toolproof.world import World

OPEN_STATUSES = ("pending", "processing")
LOYALTY_PERCENT = {"bronze": 0, "silver": 5, "gold": 10}
CROSS_SELL = {
    "apparel": ["accessories", "footwear"],
    "footwear": ["apparel", "accessories"],
    "accessories": ["apparel", "outdoor"],
    "outdoor": ["outdoor", "electronics"],
    "home": ["home"],
    "electronics": ["electronics", "outdoor"],
}
SMS_SENDER = "+18885550142"

OrderStatus = Literal["pending", "processing", "shipped", "delivered", "cancelled"]
Category = Literal["apparel", "footwear", "accessories", "outdoor", "home", "electronics"]
SmsTemplate = Literal[
    "order_status",
    "order_cancelled",
    "refund_issued",
    "discount_applied",
    "exchange_confirmed",
    "return_label",
    "address_updated",
]


# ---------------------------------------------------------------- helpers


def _today(world: World) -> str:
    today: str = world["meta"]["today"]
    return today


def _cents(amount: float) -> int:
    return round(amount * 100)


def _dollars(amount_cents: int) -> float:
    return round(amount_cents / 100, 2)


def _money(amount: float) -> str:
    return f"${amount:,.2f}"


def _order_id(order_id: str) -> str:
    oid = order_id.strip().lstrip("#").upper()
    return f"W{oid}" if oid.isdigit() else oid


def _order(world: World, order_id: str) -> tuple[str, Any]:
    oid = _order_id(order_id)
    order = world["orders"].get(oid)
    if order is None:
        raise ToolError(f"No order with id {order_id!r}.", kind="not_found")
    return oid, order


def _customer(world: World, customer_id: str) -> tuple[str, Any]:
    cid = customer_id.strip().upper()
    customer = world["customers"].get(cid)
    if customer is None:
        raise ToolError(f"No customer with id {customer_id!r}.", kind="not_found")
    return cid, customer


def _product(world: World, sku: str) -> tuple[str, Any]:
    key = sku.strip().upper()
    product = world["catalog"].get(key)
    if product is None:
        raise ToolError(f"No product with SKU {sku!r}.", kind="not_found")
    return key, product


def _variants(product: Any) -> list[str]:
    labels = [""]
    for values in product.get("options", {}).values():
        labels = [f"{label} / {v}" if label else str(v) for label in labels for v in values]
    return labels


def _variant(product: Any, sku: str, variant: str) -> str:
    """The catalog's spelling of a variant ("l/navy" -> "L / Navy")."""
    wanted = re.sub(r"\s*/\s*", " / ", variant.strip()).casefold()
    for label in _variants(product):
        if label.casefold() == wanted:
            return label
    known = ", ".join(_variants(product))
    raise ToolError(f"{sku} has no variant {variant!r}; variants: {known}.", kind="not_found")


def _phone(number: str) -> str:
    digits = re.sub(r"\D", "", number)
    if len(digits) == 10:
        digits = "1" + digits
    if len(digits) != 11 or not digits.startswith("1"):
        raise ToolError(f"{number!r} is not a valid US phone number.", kind="invalid_number")
    return "+" + digits


def _payment_method(world: World, method_id: str) -> tuple[str, Any]:
    for cid, customer in world["customers"].items():
        for method in customer["payment_methods"]:
            if method["id"] == method_id:
                return cid, method
    raise ToolError(f"No payment method {method_id!r}.", kind="not_found")


def _describe_method(method: Any) -> str:
    if method["type"] == "card":
        return f"{method['brand'].title()} ending {method['last4']}"
    if method["type"] == "paypal":
        return "PayPal"
    return f"gift card ending {method['last4']}"


def _refund(world: World, charge_id: str, amount_cents: int, method_id: str, reason: str) -> Any:
    """Refund part of a charge to a payment method and update the order's financial status."""
    charge = world["payments"][charge_id]
    refundable = _cents(charge["amount"]) - _cents(charge["amount_refunded"])
    if amount_cents <= 0:
        raise ToolError("The refund amount must be positive.", kind="invalid_amount")
    if amount_cents > refundable:
        raise ToolError(
            f"Cannot refund {_money(_dollars(amount_cents))}: only "
            f"{_money(_dollars(refundable))} of charge {charge_id} is refundable.",
            kind="invalid_amount",
        )
    _, method = _payment_method(world, method_id)
    refund = {
        "id": f"re_{charge_id[3:]}_{len(charge['refunds']) + 1}",
        "amount": _dollars(amount_cents),
        "payment_method_id": method_id,
        "status": "succeeded",
        "created": _today(world),
        "reason": reason,
    }
    charge["refunds"].append(refund)
    refunded = _cents(charge["amount_refunded"]) + amount_cents
    charge["amount_refunded"] = _dollars(refunded)
    charge["refunded"] = refunded == _cents(charge["amount"])
    if method["type"] == "gift_card":
        method["balance"] = _dollars(_cents(method["balance"]) + amount_cents)
    order = world["orders"].get(charge["order_id"])
    if order is not None:
        order["financial_status"] = "refunded" if charge["refunded"] else "partially_refunded"
    return refund


def _label_number(oid: str, order: Any) -> str:
    """A deterministic UPS return-label number for the order's next return shipment."""
    n = len(order.get("returns", [])) + len(order.get("exchanges", [])) + 1
    return f"1ZRF4R90{oid[1:]:0>7}{n:03d}"


def _item(order: Any, oid: str, sku: str) -> Any:
    for item in order["items"]:
        if item["sku"] == sku:
            return item
    raise ToolError(f"Order {oid} has no item {sku}.", kind="not_found")


# ---------------------------------------------------------------- customers


@tool
def find_customer(world: World, email: str | None = None, phone: str | None = None) -> Any:
    """Find a customer account by email address or phone number.

    Use this to identify (authenticate) the customer you are talking to.

    Args:
        email: The email address on the account, e.g. "maria.lopez@example.com".
        phone: The phone number on the account, in any format, e.g. "(503) 555-0142".
    """
    if not email and not phone:
        raise ToolError("Give an email or a phone number.", kind="invalid_request")
    wanted_email = email.strip().casefold() if email else None
    wanted_phone = _phone(phone) if phone else None
    for cid, customer in world["customers"].items():
        if (wanted_email and customer["email"].casefold() == wanted_email) or (
            wanted_phone and customer["phone"] == wanted_phone
        ):
            return {
                "customer_id": cid,
                "name": customer["name"],
                "email": customer["email"],
                "phone": customer["phone"],
                "loyalty_tier": customer["loyalty_tier"],
            }
    raise ToolError("No customer matches that email or phone number.", kind="not_found")


@tool
def get_customer(world: World, customer_id: str) -> Any:
    """Get a customer's profile: contact details, loyalty tier, address and payment methods.

    Args:
        customer_id: The customer id, e.g. "C0042".
    """
    cid, customer = _customer(world, customer_id)
    return {"customer_id": cid, **customer}


@tool
def list_orders(world: World, customer_id: str, status: OrderStatus | None = None) -> Any:
    """List a customer's orders, newest first, with status, date, total and item count.

    Args:
        customer_id: The customer id, e.g. "C0042".
        status: Only orders with this status.
    """
    cid, _ = _customer(world, customer_id)
    found = [
        {
            "order_id": oid,
            "placed_on": order["placed_on"],
            "status": order["status"],
            "total": order["total"],
            "items": sum(item["qty"] for item in order["items"]),
        }
        for oid, order in world["orders"].items()
        if order["customer_id"] == cid and (status is None or order["status"] == status)
    ]
    found.sort(key=lambda o: (o["placed_on"], o["order_id"]), reverse=True)
    return {"customer_id": cid, "orders": found}


# ---------------------------------------------------------------- orders


@tool
def get_order(world: World, order_id: str) -> Any:
    """Get an order from the order system: items, status, dates, totals, payment and shipping.

    Statuses: pending (placed, not yet sent to the warehouse), processing (at the warehouse),
    shipped, delivered, cancelled. `fulfillment` holds the carrier and tracking number once
    the order has shipped.

    Args:
        order_id: The order number, e.g. "W10234".
    """
    oid, order = _order(world, order_id)
    return {"order_id": oid, **order}


@tool(write=True)
def cancel_order(world: World, order_id: str) -> Any:
    """Cancel an order that has not shipped yet (status pending or processing).

    The items go back to stock. The payment is not refunded by this call: refund the charge
    with refund_payment.

    Args:
        order_id: The order number, e.g. "W10234".
    """
    oid, order = _order(world, order_id)
    if order["status"] not in OPEN_STATUSES:
        raise ToolError(
            f"Order {oid} is {order['status']}; only pending or processing orders can be "
            "cancelled.",
            kind="invalid_state",
        )
    order["status"] = "cancelled"
    order["cancelled_on"] = _today(world)
    for item in order["items"]:
        stock = world["inventory"].setdefault(item["sku"], {})
        stock[item["variant"]] = stock.get(item["variant"], 0) + item["qty"]
    charge = world["payments"][order["charge_id"]]
    return {
        "order_id": oid,
        "status": "cancelled",
        "cancelled_on": order["cancelled_on"],
        "charge_id": order["charge_id"],
        "refundable_amount": _dollars(_cents(charge["amount"]) - _cents(charge["amount_refunded"])),
        "payment_method_id": charge["payment_method_id"],
    }


@tool(write=True)
def update_shipping_address(
    world: World,
    order_id: str,
    line1: str,
    city: str,
    state: str,
    zip: str,
    line2: str = "",
) -> Any:
    """Change the shipping address of an order that has not shipped yet.

    Args:
        order_id: The order number, e.g. "W10234".
        line1: Street address, e.g. "42 Harbor Way".
        city: City.
        state: Two-letter state code, e.g. "OR".
        zip: Five-digit ZIP code.
        line2: Apartment, suite or unit, if any.
    """
    oid, order = _order(world, order_id)
    if order["status"] not in OPEN_STATUSES:
        raise ToolError(
            f"Order {oid} is {order['status']}; the address can only change before shipping.",
            kind="invalid_state",
        )
    state_code = state.strip().upper()
    zip_code = zip.strip()
    if not re.fullmatch(r"[A-Z]{2}", state_code):
        raise ToolError(f"{state!r} is not a two-letter state code.", kind="invalid_address")
    if not re.fullmatch(r"\d{5}(-\d{4})?", zip_code):
        raise ToolError(f"{zip!r} is not a valid ZIP code.", kind="invalid_address")
    address = {
        "line1": " ".join(line1.split()),
        "line2": " ".join(line2.split()),
        "city": " ".join(city.split()),
        "state": state_code,
        "zip": zip_code,
        "country": "US",
    }
    if not address["line1"] or not address["city"]:
        raise ToolError("Street address and city are required.", kind="invalid_address")
    order["shipping_address"] = address
    return {"order_id": oid, "shipping_address": address}


@tool(write=True)
def exchange_item(world: World, order_id: str, sku: str, new_variant: str) -> Any:
    """Exchange an item of a delivered order for another variant (size or color) of it.

    The new variant ships at no charge once in stock; the customer sends the original back
    with the prepaid return label this call creates.

    Args:
        order_id: The order number, e.g. "W10234".
        sku: The product id of the item to exchange, e.g. "AP-101".
        new_variant: The variant wanted, spelled as in the catalog, e.g. "L / Navy".
    """
    oid, order = _order(world, order_id)
    key, product = _product(world, sku)
    if order["status"] != "delivered":
        raise ToolError(
            f"Order {oid} is {order['status']}; only delivered orders can be exchanged.",
            kind="invalid_state",
        )
    item = _item(order, oid, key)
    target = _variant(product, key, new_variant)
    if target == item["variant"]:
        raise ToolError(f"The item already is {target}.", kind="invalid_request")
    if any(x["sku"] == key for x in order.get("exchanges", [])):
        raise ToolError(f"{key} on order {oid} was already exchanged.", kind="invalid_state")
    stock = world["inventory"][key]
    if stock.get(target, 0) < item["qty"]:
        raise ToolError(f"{product['name']} {target} is out of stock.", kind="out_of_stock")
    stock[target] -= item["qty"]
    exchange = {
        "exchange_id": f"EX-{oid}-{len(order.get('exchanges', [])) + 1}",
        "sku": key,
        "qty": item["qty"],
        "from_variant": item["variant"],
        "to_variant": target,
        "status": "awaiting_return",
        "requested_on": _today(world),
        "return_label": {"carrier": "UPS", "tracking_number": _label_number(oid, order)},
    }
    order.setdefault("exchanges", []).append(exchange)
    return {"order_id": oid, **exchange}


@tool(write=True)
def create_return_label(world: World, order_id: str, sku: str, qty: int | None = None) -> Any:
    """Create a prepaid UPS return label for an item of a delivered order.

    The refund of the item is issued to the original payment method when the warehouse
    receives it back.

    Args:
        order_id: The order number, e.g. "W10234".
        sku: The product id of the item to return, e.g. "HM-502".
        qty: How many to return; all of them when omitted.
    """
    oid, order = _order(world, order_id)
    key = sku.strip().upper()
    if order["status"] != "delivered":
        raise ToolError(
            f"Order {oid} is {order['status']}; only delivered orders can be returned.",
            kind="invalid_state",
        )
    item = _item(order, oid, key)
    count = item["qty"] if qty is None else qty
    if not 1 <= count <= item["qty"]:
        raise ToolError(
            f"Order {oid} has {item['qty']} of {key}; cannot return {count}.",
            kind="invalid_request",
        )
    if any(r["sku"] == key for r in order.get("returns", [])):
        raise ToolError(f"A return for {key} on order {oid} already exists.", kind="invalid_state")
    ret = {
        "return_id": f"RT-{oid}-{len(order.get('returns', [])) + 1}",
        "sku": key,
        "qty": count,
        "status": "label_created",
        "created_on": _today(world),
        "refund_on_receipt": _dollars(_cents(item["unit_price"]) * count),
        "label": {"carrier": "UPS", "tracking_number": _label_number(oid, order)},
    }
    order.setdefault("returns", []).append(ret)
    return {"order_id": oid, **ret}


# ---------------------------------------------------------------- payments


@tool
def get_payment(world: World, order_id: str | None = None, charge_id: str | None = None) -> Any:
    """Get the payment charge of an order: amount, payment method and refunds so far.

    Args:
        order_id: The order number, e.g. "W10234".
        charge_id: The charge id, e.g. "ch_3Nq...", when known instead.
    """
    if charge_id is None:
        if order_id is None:
            raise ToolError("Give an order_id or a charge_id.", kind="invalid_request")
        _, order = _order(world, order_id)
        charge_id = order["charge_id"]
    charge = world["payments"].get(charge_id.strip())
    if charge is None:
        raise ToolError(f"No such charge: {charge_id!r}.", kind="not_found")
    return {"id": charge_id.strip(), **charge}


@tool(write=True)
def refund_payment(world: World, charge_id: str, amount: float, payment_method_id: str) -> Any:
    """Refund all or part of a charge to a payment method.

    A refund to a gift card adds the amount to the card's balance.

    Args:
        charge_id: The charge to refund, e.g. "ch_3Nq...".
        amount: Amount in dollars, e.g. 54.04; at most what is left unrefunded on the charge.
        payment_method_id: Where the money goes, e.g. "pm_card_0042".
    """
    charge = world["payments"].get(charge_id.strip())
    if charge is None:
        raise ToolError(f"No such charge: {charge_id!r}.", kind="not_found")
    refund = _refund(world, charge_id.strip(), _cents(amount), payment_method_id, "requested")
    return {
        "refund": refund,
        "charge_id": charge_id.strip(),
        "amount_refunded": charge["amount_refunded"],
        "refunded": charge["refunded"],
    }


# ---------------------------------------------------------------- loyalty


@tool(write=True)
def apply_loyalty_discount(world: World, order_id: str) -> Any:
    """Apply the customer's loyalty-tier discount to an order that has not shipped yet.

    The discount is a percentage of the merchandise subtotal (not shipping), set by the
    customer's tier. The order total goes down and the difference is refunded to the order's
    original payment method at once.

    Args:
        order_id: The order number, e.g. "W10234".
    """
    oid, order = _order(world, order_id)
    if order["status"] not in OPEN_STATUSES:
        raise ToolError(
            f"Order {oid} is {order['status']}; discounts apply only before shipping.",
            kind="invalid_state",
        )
    _, customer = _customer(world, order["customer_id"])
    tier = customer["loyalty_tier"]
    percent = LOYALTY_PERCENT[tier]
    if not percent:
        raise ToolError(f"The {tier} tier has no loyalty discount.", kind="not_eligible")
    amount = round(_cents(order["subtotal"]) * percent / 100)
    discount = {
        "code": f"LOYALTY-{tier.upper()}",
        "percent": percent,
        "amount": _dollars(amount),
        "applied_on": _today(world),
    }
    order["discounts"].append(discount)
    order["total"] = _dollars(_cents(order["total"]) - amount)
    refund = _refund(
        world, order["charge_id"], amount, order["payment_method_id"], "loyalty_discount"
    )
    return {"order_id": oid, "discount": discount, "new_total": order["total"], "refund": refund}


# ---------------------------------------------------------------- catalog and inventory


@tool
def search_products(world: World, query: str, category: Category | None = None) -> Any:
    """Search the catalog by words in the product name.

    Args:
        query: Words to look for, e.g. "trail runner".
        category: Only products of this category.
    """
    words = query.casefold().split()
    found = [
        {"sku": sku, "name": p["name"], "category": p["category"], "price": p["price"]}
        for sku, p in world["catalog"].items()
        if (category is None or p["category"] == category)
        and all(w in f"{p['name']} {p['category']}".casefold() for w in words)
    ]
    return {"results": sorted(found, key=lambda p: p["sku"])}


@tool
def get_product(world: World, sku: str) -> Any:
    """Get a product: name, category, price, rating, options and the exact variant names.

    Args:
        sku: The product id, e.g. "AP-101".
    """
    key, product = _product(world, sku)
    return {"sku": key, **product, "variants": _variants(product)}


@tool
def check_inventory(world: World, sku: str, variant: str | None = None) -> Any:
    """Units in stock for each variant of a product, or for one variant.

    Args:
        sku: The product id, e.g. "AP-101".
        variant: One variant, e.g. "L / Navy"; all variants when omitted.
    """
    key, product = _product(world, sku)
    stock = world["inventory"].get(key, {})
    if variant is not None:
        label = _variant(product, key, variant)
        return {
            "sku": key,
            "name": product["name"],
            "variant": label,
            "in_stock": stock.get(label, 0),
        }
    return {"sku": key, "name": product["name"], "in_stock": dict(stock)}


@tool
def recommend_products(world: World, sku: str, limit: int = 3) -> Any:
    """Cross-sell: in-stock products from categories that go with a product, best rated first.

    Args:
        sku: The product the customer bought or is looking at, e.g. "AP-101".
        limit: How many to suggest (1 to 10).
    """
    key, product = _product(world, sku)
    if not 1 <= limit <= 10:
        raise ToolError("limit must be between 1 and 10.", kind="invalid_request")
    categories = CROSS_SELL.get(product["category"], [product["category"]])
    picks = [
        (-p["rating"], p["price"], other, p)
        for other, p in world["catalog"].items()
        if other != key
        and p["category"] in categories
        and any(n > 0 for n in world["inventory"].get(other, {}).values())
    ]
    picks.sort(key=lambda t: (t[0], t[1], t[2]))
    return {
        "for": key,
        "recommendations": [
            {"sku": s, "name": p["name"], "category": p["category"], "price": p["price"]}
            for _, _, s, p in picks[:limit]
        ],
    }


# ---------------------------------------------------------------- notifications


def _sms_body(world: World, template: str, oid: str, order: Any) -> str:
    store = world["meta"]["store"]
    charge = world["payments"][order["charge_id"]]

    def last(kind: str, what: str) -> Any:
        entries = order.get(kind) or []
        if not entries:
            raise ToolError(f"Order {oid} has no {what} to tell about.", kind="invalid_state")
        return entries[-1]

    def refund_line(refund: Any) -> str:
        _, method = _payment_method(world, refund["payment_method_id"])
        return f"A refund of {_money(refund['amount'])} to your {_describe_method(method)}"

    if template == "order_status":
        text = f"order {oid} is {order['status']}."
        if "fulfillment" in order and order["status"] == "shipped":
            f = order["fulfillment"]
            text += f" Track it with {f['carrier']}: {f['tracking_number']}."
    elif template == "order_cancelled":
        if order["status"] != "cancelled":
            raise ToolError(f"Order {oid} is not cancelled.", kind="invalid_state")
        text = f"order {oid} has been cancelled."
        if charge["refunds"]:
            text += f" {refund_line(charge['refunds'][-1])} is on its way."
    elif template == "refund_issued":
        if not charge["refunds"]:
            raise ToolError(f"Order {oid} has no refund to tell about.", kind="invalid_state")
        refund = charge["refunds"][-1]
        _, method = _payment_method(world, refund["payment_method_id"])
        text = (
            f"we've refunded {_money(refund['amount'])} for order {oid} to your "
            f"{_describe_method(method)}."
        )
    elif template == "discount_applied":
        d = last("discounts", "discount")
        text = (
            f"a {d['percent']}% loyalty discount ({_money(d['amount'])}) was applied to order "
            f"{oid}. New total: {_money(order['total'])}."
        )
    elif template == "exchange_confirmed":
        x = last("exchanges", "exchange")
        text = (
            f"your exchange on order {oid} is confirmed: {x['from_variant']} -> "
            f"{x['to_variant']}. Return label: UPS {x['return_label']['tracking_number']}."
        )
    elif template == "return_label":
        r = last("returns", "return")
        text = f"your return label for order {oid}: UPS {r['label']['tracking_number']}."
    else:
        a = order["shipping_address"]
        text = f"order {oid} will ship to {a['line1']}, {a['city']}, {a['state']} {a['zip']}."
    return f"{store}: {text[0].upper()}{text[1:]}"


@tool(write=True)
def send_sms(world: World, to: str, template: SmsTemplate, order_id: str) -> Any:
    """Text the customer about an order, using one of the registered message templates.

    The text is filled in from the order as it is now, so send it after the change it
    reports. Templates: order_status, order_cancelled (with the refund, if any),
    refund_issued, discount_applied, exchange_confirmed, return_label, address_updated.

    Args:
        to: The customer's phone number, e.g. "+15035550142".
        template: Which message to send.
        order_id: The order the message is about, e.g. "W10234".
    """
    number = _phone(to)
    oid, order = _order(world, order_id)
    body = _sms_body(world, template, oid, order)
    outbox = world["sms"]
    message = {
        "sid": f"SM{len(outbox) + 1:06d}",
        "from": SMS_SENDER,
        "to": number,
        "template": template,
        "order_id": oid,
        "body": body,
        "sent_on": _today(world),
    }
    outbox.append(message)
    return {**message, "status": "queued"}


# ---------------------------------------------------------------- legacy ERP


@tool
def erp_lookup(world: World, order_no: str) -> Any:
    """Look up an order's warehouse record in the legacy ERP (shipping status of record).

    Orders appear once released to a warehouse; a pending order has no record yet.
    SHIP_STAT codes: PICK (at the warehouse, being picked and packed), SHPD (shipped, in
    transit), DLVD (delivered, per carrier scan), RTS (returned to sender as undeliverable,
    back at the warehouse), HOLD (held at the warehouse, see RMK), CANC (cancelled at the
    warehouse). Dates are YYYYMMDD; LAST_UPD is "YYYYMMDD HHMM".

    Args:
        order_no: The order number, e.g. "W10234".
    """
    oid = _order_id(order_no)
    record = world["erp"].get(oid)
    if record is None:
        raise ToolError(f"ERP0404 RECORD NOT FOUND ORD_NO={oid}", kind="not_found")
    return dict(record)
