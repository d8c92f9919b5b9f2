"""The retail world: customers, orders, payments, inventory, an SMS outbox and the legacy ERP.

`build(data)` turns the catalog into a store with a few months of history. Everything comes
from one seeded random generator, so the same catalog always gives the same world.

Money is in dollars as floats rounded to cents. Dates are ISO strings ("2026-11-20"), except
in the ERP, which speaks like the mainframe it runs on ("20261120").
"""

from __future__ import annotations

import random
import string
from datetime import date, timedelta
from typing import Any

SEED = 20261129
TODAY = date(2026, 11, 20)
FIRST_ORDER_DAY = date(2026, 5, 1)
ERP_SINCE = date(2026, 9, 1)
N_CUSTOMERS = 240
N_ORDERS = 1200
FREE_SHIPPING_FROM = 50.0
SHIPPING_FEE = 5.99
LOYALTY_PERCENT = {"bronze": 0, "silver": 5, "gold": 10}

FIRST_NAMES = [
    "Ava", "Ben", "Carla", "Daniel", "Elena", "Farid", "Grace", "Hiro", "Isabel", "Jamal",
    "Keiko", "Liam", "Maria", "Noah", "Olivia", "Priya", "Quinn", "Rafael", "Sofia", "Tomas",
    "Uma", "Victor", "Wen", "Ximena", "Yusuf", "Zoe", "Aaron", "Bianca", "Chen", "Dmitri",
    "Esther", "Felix", "Gabriela", "Hassan", "Ingrid", "Jonah", "Kavya", "Lucia", "Marcus",
    "Nadia",
]  # fmt: skip
LAST_NAMES = [
    "Alvarez", "Brooks", "Castillo", "Dubois", "Eriksen", "Fischer", "Garcia", "Hughes",
    "Ito", "Jensen", "Kowalski", "Lopez", "Murphy", "Nakamura", "Okafor", "Patel", "Quinlan",
    "Rossi", "Schmidt", "Tanaka", "Usman", "Vega", "Walsh", "Xu", "Yamamoto", "Zimmerman",
    "Bennett", "Chowdhury", "Delgado", "Ellis",
]  # fmt: skip
EMAIL_DOMAINS = ["example.com", "example.net", "example.org"]
PLACES = [
    ("Portland", "OR", "972", "503"),
    ("Seattle", "WA", "981", "206"),
    ("Denver", "CO", "802", "303"),
    ("Austin", "TX", "787", "512"),
    ("Chicago", "IL", "606", "312"),
    ("Columbus", "OH", "432", "614"),
    ("Atlanta", "GA", "303", "404"),
    ("Raleigh", "NC", "276", "919"),
    ("Boston", "MA", "021", "617"),
    ("Minneapolis", "MN", "554", "612"),
    ("Phoenix", "AZ", "850", "602"),
    ("Sacramento", "CA", "958", "916"),
]
STREETS = [
    "Maple St", "Oak Ave", "Cedar Ln", "Harbor Way", "Hillcrest Dr", "Pine St", "Willow Ct",
    "Lakeview Rd", "Elm St", "Sunset Blvd", "River Rd", "Birch Pl", "Summit Ave", "Park St",
]  # fmt: skip
CARD_BRANDS = ["visa", "visa", "visa", "mastercard", "mastercard", "amex", "discover"]
WAREHOUSES = ["RNO-02", "ATL-01", "CMH-03"]
CARRIERS = ["UPS", "UPS", "USPS", "FedEx"]


def build(data: dict[str, Any]) -> dict[str, Any]:
    """The store's collections, generated from the catalog (`data["catalog"]`)."""
    rng = random.Random(SEED)
    catalog = data["catalog"]
    customers = _customers(rng)
    inventory = _inventory(rng, catalog)
    orders, payments, erp = _orders(rng, catalog, customers)
    return {
        "customers": customers,
        "orders": orders,
        "payments": payments,
        "inventory": inventory,
        "sms": [],
        "erp": erp,
        "meta": {
            "store": "Fernhill Supply Co.",
            "today": TODAY.isoformat(),
            "currency": "usd",
            "return_window_days": 30,
            "loyalty_percent": dict(LOYALTY_PERCENT),
        },
    }


# ---------------------------------------------------------------- helpers shared with tools.py


def variant_labels(product: dict[str, Any]) -> list[str]:
    """Every variant of a product: one value per option, in option order, joined by " / "."""
    labels = [""]
    for values in product.get("options", {}).values():
        labels = [f"{label} / {v}" if label else str(v) for label in labels for v in values]
    return labels


def cents(amount: float) -> int:
    return round(amount * 100)


def dollars(amount_cents: int) -> float:
    return round(amount_cents / 100, 2)


def charge_id(rng: random.Random) -> str:
    alphabet = string.ascii_letters + string.digits
    return "ch_3" + "".join(rng.choice(alphabet) for _ in range(23))


def tracking_number(carrier: str, rng: random.Random) -> str:
    if carrier == "UPS":
        return (
            "1Z"
            + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(6))
            + ("03" + "".join(rng.choice(string.digits) for _ in range(8)))
        )
    if carrier == "USPS":
        return "9400" + "".join(rng.choice(string.digits) for _ in range(18))
    return "".join(rng.choice(string.digits) for _ in range(12))


# ---------------------------------------------------------------- customers


def _customers(rng: random.Random) -> dict[str, Any]:
    customers: dict[str, Any] = {}
    emails: set[str] = set()
    phones: set[str] = set()
    counters = {"card": 0, "paypal": 0, "gift": 0}
    for n in range(1, N_CUSTOMERS + 1):
        cid = f"C{n:04d}"
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        domain = rng.choice(EMAIL_DOMAINS)
        local = f"{first}.{last}".lower()
        email = f"{local}@{domain}"
        suffix = 2
        while email in emails:
            email = f"{local}{suffix}@{domain}"
            suffix += 1
        emails.add(email)
        city, state, zip3, area = rng.choice(PLACES)
        phone = f"+1{area}555{rng.randint(0, 9999):04d}"
        while phone in phones:
            phone = f"+1{area}555{rng.randint(0, 9999):04d}"
        phones.add(phone)
        tier = rng.choices(["bronze", "silver", "gold"], weights=[55, 30, 15])[0]
        methods = [_card(rng, counters)]
        if rng.random() < 0.4:
            counters["paypal"] += 1
            methods.append(
                {"id": f"pm_paypal_{counters['paypal']:04d}", "type": "paypal", "email": email}
            )
        if rng.random() < 0.15:
            methods.append(_card(rng, counters))
        if rng.random() < 0.2:
            counters["gift"] += 1
            methods.append(
                {
                    "id": f"pm_gift_{counters['gift']:04d}",
                    "type": "gift_card",
                    "last4": f"{rng.randint(0, 9999):04d}",
                    "balance": float(rng.choice([0, 10, 25, 25, 50, 100])),
                }
            )
        line2 = rng.choice(["", "", "", f"Apt {rng.randint(1, 40)}{rng.choice('ABCD')}"])
        customers[cid] = {
            "name": f"{first} {last}",
            "email": email,
            "phone": phone,
            "loyalty_tier": tier,
            "member_since": (date(2021, 1, 1) + timedelta(days=rng.randint(0, 2000))).isoformat(),
            "address": {
                "line1": f"{rng.randint(10, 9899)} {rng.choice(STREETS)}",
                "line2": line2,
                "city": city,
                "state": state,
                "zip": f"{zip3}{rng.randint(0, 99):02d}",
                "country": "US",
            },
            "payment_methods": methods,
            "default_payment_method_id": methods[0]["id"],
        }
    return customers


def _card(rng: random.Random, counters: dict[str, int]) -> dict[str, Any]:
    counters["card"] += 1
    return {
        "id": f"pm_card_{counters['card']:04d}",
        "type": "card",
        "brand": rng.choice(CARD_BRANDS),
        "last4": f"{rng.randint(0, 9999):04d}",
        "exp": f"{rng.randint(1, 12):02d}/{rng.randint(27, 31)}",
    }


# ---------------------------------------------------------------- inventory


def _inventory(rng: random.Random, catalog: dict[str, Any]) -> dict[str, Any]:
    inventory: dict[str, Any] = {}
    for sku in sorted(catalog):
        inventory[sku] = {
            label: 0 if rng.random() < 0.1 else rng.randint(1, 60)
            for label in variant_labels(catalog[sku])
        }
    return inventory


# ---------------------------------------------------------------- orders, payments, ERP


def _orders(
    rng: random.Random, catalog: dict[str, Any], customers: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    skus = sorted(catalog)
    customer_ids = sorted(customers)
    # Some customers shop far more often than others.
    activity = [rng.choice([1, 1, 2, 3, 5, 8]) for _ in customer_ids]
    span = (TODAY - FIRST_ORDER_DAY).days
    days = sorted(
        FIRST_ORDER_DAY + timedelta(days=int(span * rng.random() ** 0.45)) for _ in range(N_ORDERS)
    )
    orders: dict[str, Any] = {}
    payments: dict[str, Any] = {}
    erp: dict[str, Any] = {}
    for n, placed in enumerate(days):
        oid = f"W{10001 + n}"
        cid = rng.choices(customer_ids, weights=activity)[0]
        customer = customers[cid]
        items: list[dict[str, Any]] = []
        for sku in rng.sample(skus, rng.choice([1, 1, 1, 2, 2, 3])):
            product = catalog[sku]
            items.append(
                {
                    "sku": sku,
                    "name": product["name"],
                    "variant": rng.choice(variant_labels(product)),
                    "qty": rng.choice([1, 1, 1, 1, 2]),
                    "unit_price": float(product["price"]),
                }
            )
        subtotal = sum(cents(i["unit_price"]) * i["qty"] for i in items)
        shipping = 0 if subtotal >= cents(FREE_SHIPPING_FROM) else cents(SHIPPING_FEE)
        discounts: list[dict[str, Any]] = []
        percent = LOYALTY_PERCENT[customer["loyalty_tier"]]
        if percent and rng.random() < 0.25:
            amount = round(subtotal * percent / 100)
            discounts.append(
                {
                    "code": f"LOYALTY-{customer['loyalty_tier'].upper()}",
                    "percent": percent,
                    "amount": dollars(amount),
                    "applied_on": placed.isoformat(),
                }
            )
        total = subtotal + shipping - sum(cents(d["amount"]) for d in discounts)
        method = rng.choice(customer["payment_methods"][:2])
        if method["type"] == "gift_card":
            method = customer["payment_methods"][0]
        status, shipped_on, delivered_on = _lifecycle(rng, placed)
        ch = charge_id(rng)
        order: dict[str, Any] = {
            "customer_id": cid,
            "placed_on": placed.isoformat(),
            "status": status,
            "items": items,
            "subtotal": dollars(subtotal),
            "shipping_fee": dollars(shipping),
            "discounts": discounts,
            "total": dollars(total),
            "payment_method_id": method["id"],
            "charge_id": ch,
            "financial_status": "paid",
            "shipping_address": dict(customer["address"]),
        }
        carrier = rng.choice(CARRIERS)
        tracking = tracking_number(carrier, rng)
        if shipped_on is not None:
            order["fulfillment"] = {
                "carrier": carrier,
                "tracking_number": tracking,
                "shipped_on": shipped_on.isoformat(),
            }
        if delivered_on is not None:
            order["delivered_on"] = delivered_on.isoformat()
        charge: dict[str, Any] = {
            "order_id": oid,
            "customer_id": cid,
            "amount": dollars(total),
            "currency": "usd",
            "status": "succeeded",
            "created": placed.isoformat(),
            "payment_method_id": method["id"],
            "payment_method": _method_details(method),
            "amount_refunded": 0.0,
            "refunded": False,
            "refunds": [],
        }
        if status == "cancelled":
            cancelled_on = placed + timedelta(days=rng.randint(0, 1))
            order["cancelled_on"] = cancelled_on.isoformat()
            order["financial_status"] = "refunded"
            charge["amount_refunded"] = dollars(total)
            charge["refunded"] = True
            charge["refunds"].append(
                {
                    "id": f"re_{ch[3:]}_1",
                    "amount": dollars(total),
                    "payment_method_id": method["id"],
                    "status": "succeeded",
                    "created": cancelled_on.isoformat(),
                    "reason": "order_cancelled",
                }
            )
        orders[oid] = order
        payments[ch] = charge
        if placed >= ERP_SINCE and status in ("processing", "shipped", "delivered"):
            erp[oid] = _erp_record(rng, oid, status, carrier, tracking, shipped_on, delivered_on)
    return orders, payments, erp


def _lifecycle(rng: random.Random, placed: date) -> tuple[str, date | None, date | None]:
    """(status, shipped_on, delivered_on) for an order placed on a day, as of TODAY."""
    age = (TODAY - placed).days
    if age >= 1 and rng.random() < 0.04:
        return "cancelled", None, None
    if age == 0:
        return rng.choice(["pending", "pending", "processing"]), None, None
    if age <= 3 and rng.random() < 0.6:
        return rng.choice(["pending", "processing", "processing"]), None, None
    shipped = placed + timedelta(days=rng.randint(1, min(age, 3)))
    delivered = shipped + timedelta(days=rng.randint(2, 6))
    if delivered >= TODAY:
        return "shipped", shipped, None
    return "delivered", shipped, delivered


def _method_details(method: dict[str, Any]) -> dict[str, Any]:
    if method["type"] == "card":
        return {"type": "card", "brand": method["brand"], "last4": method["last4"]}
    if method["type"] == "paypal":
        return {"type": "paypal", "email": method["email"]}
    return {"type": "gift_card", "last4": method["last4"]}


def _erp_date(day: date | None) -> str:
    return day.strftime("%Y%m%d") if day else ""


def _erp_record(
    rng: random.Random,
    oid: str,
    status: str,
    carrier: str,
    tracking: str,
    shipped_on: date | None,
    delivered_on: date | None,
) -> dict[str, Any]:
    """The ERP's view of an order. It is usually in step with the order system, not always."""
    stat = {"processing": "PICK", "shipped": "SHPD", "delivered": "DLVD"}[status]
    if stat == "SHPD" and shipped_on and rng.random() < 0.05:
        # The carrier scan reached the ERP before the storefront caught up.
        stat, delivered_on = "DLVD", min(shipped_on + timedelta(days=2), TODAY)
    shipped = stat in ("SHPD", "DLVD")
    last = delivered_on or shipped_on or TODAY
    warehouse = rng.choice(WAREHOUSES)
    hour, minute = rng.randint(0, 23), rng.randint(0, 59)
    if last == TODAY:
        hour %= 9  # the chat happens during today's business hours
    return {
        "ORD_NO": oid,
        "SHIP_STAT": stat,
        "WHSE": warehouse,
        "CARRIER": carrier.upper() if shipped else "",
        "TRACK_NO": tracking if shipped else "",
        "SHIP_DT": _erp_date(shipped_on) if shipped else "",
        "DLV_DT": _erp_date(delivered_on) if stat == "DLVD" else "",
        "LAST_UPD": f"{_erp_date(last)} {hour:02d}{minute:02d}",
        "RMK": "",
    }
