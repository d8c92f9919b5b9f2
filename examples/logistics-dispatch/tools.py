"""The dispatcher's tools: shipments, GPS routing, the fleet, pricing, notices and the mainframe.

Each tool stands for a service a real freight dispatch desk calls:

- the shipment system (REST, OAuth bearer token): shipments, reschedules, cancellations,
  invoices, and `refresh_token` for its short-lived token
- GPS routing: road distance, driving time and ETA between depots, sites and coordinates
- fleet management: vehicles, drivers, driving hours, assignments
- the pricing engine: quotes from the rate card
- customer notifications: pre-approved SMS and email templates
- DISPATCH/390, the legacy mainframe that owns the loading-dock slots of every depot; it
  answers in upper case with DSPnnnn message codes

The services check what they would check in production (a van cannot carry four tonnes, a
full dock slot takes nothing more, a driver needs the licence for the vehicle) and nothing
more: driving-hour limits, which slot and which vehicle to choose, and who may hear what are
the dispatch policy's business, and so the agent's.
"""

from __future__ import annotations

import math
import re
from datetime import date, timedelta
from typing import Any, Literal

from toolproof.tools import ToolError, tool
from toolproof.world import World

LOADING_MINUTES = 60
ACCESS_TOKEN = "kst_at_8Jq2VwR4mZ0cT7nL5yH3pXe9"

ShipmentStatus = Literal[
    "booked", "planned", "in_transit", "delivered", "exception", "cancelled", "on_hold"
]
ServiceLevel = Literal["economy", "standard", "express"]
Extra = Literal["liftgate", "hazmat"]
VehicleType = Literal["van", "box_truck", "tractor_trailer"]
Licence = Literal["B", "C", "CE"]
Template = Literal[
    "dispatch_confirmed",
    "delivery_rescheduled",
    "eta_update",
    "shipment_cancelled",
    "invoice_adjusted",
]
OPEN_STATUSES = ("booked", "planned")


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


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _minutes_of(hhmm: str) -> int:
    digits = hhmm.replace(":", "")
    return int(digits[:2]) * 60 + int(digits[2:])


def _mf_date(day: str) -> str:
    return day.replace("-", "")


def _date(world: World, value: str | None) -> str:
    """An ISO date from "2026-12-03", "20261203", "12/03/2026", "12/3", "today", "tomorrow"."""
    today = date.fromisoformat(_today(world))
    if value is None:
        return today.isoformat()
    text = value.strip().lower()
    if text in ("today", "tomorrow"):
        return (today + timedelta(days=text == "tomorrow")).isoformat()
    try:
        if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", text):
            y, m, d = (int(p) for p in text.split("-"))
        elif re.fullmatch(r"\d{8}", text):
            y, m, d = int(text[:4]), int(text[4:6]), int(text[6:])
        elif re.fullmatch(r"\d{1,2}/\d{1,2}(/\d{4})?", text):
            parts = [int(p) for p in text.split("/")]
            m, d, y = parts[0], parts[1], parts[2] if len(parts) == 3 else today.year
        else:
            raise ValueError(text)
        return date(y, m, d).isoformat()
    except ValueError:
        raise ToolError(
            f'{value!r} is not a date; use YYYY-MM-DD, e.g. "2026-12-03".', kind="invalid_date"
        ) from None


def _time(value: str, what: str) -> int:
    """Minutes after midnight from "08:00", "8:00", "0800", "8", "8am", "1 pm"."""
    text = value.strip().lower().replace(" ", "").replace(".", "")
    match = re.fullmatch(r"(\d{1,2})(?::?(\d{2}))?(am|pm)?", text)
    if not match:
        raise ToolError(f"{what} {value!r} is not a time; use HH:MM.", kind="invalid_time")
    hours, minutes = int(match.group(1)), int(match.group(2) or 0)
    if match.group(3) == "pm" and hours < 12:
        hours += 12
    if match.group(3) == "am" and hours == 12:
        hours = 0
    if hours > 23 or minutes > 59:
        raise ToolError(f"{what} {value!r} is not a time of day.", kind="invalid_time")
    return hours * 60 + minutes


def _shipment_id(value: str) -> str:
    key = re.sub(r"[\s#-]", "", value).upper()
    return f"SH{key}" if key.isdigit() else key


def _shipment(world: World, shipment_id: str) -> tuple[str, Any]:
    sid = _shipment_id(shipment_id)
    shipment = world["shipments"].get(sid)
    if shipment is None:
        raise ToolError(f"No shipment {shipment_id!r}.", kind="not_found")
    return sid, shipment


def _vehicle(world: World, vehicle_id: str) -> tuple[str, Any]:
    key = re.sub(r"[\s-]", "", vehicle_id).upper()
    vid = f"V{key}" if key.isdigit() else key
    vehicle = world["vehicles"].get(vid)
    if vehicle is None:
        raise ToolError(f"No vehicle {vehicle_id!r}.", kind="not_found")
    return vid, vehicle


def _driver(world: World, driver_id: str) -> tuple[str, Any]:
    key = re.sub(r"[\s-]", "", driver_id).upper()
    did = f"D{key}" if key.isdigit() else key
    driver = world["drivers"].get(did)
    if driver is None:
        raise ToolError(f"No driver {driver_id!r}.", kind="not_found")
    return did, driver


def _account(world: World, account_id: str) -> tuple[str, Any]:
    key = re.sub(r"[\s-]", "", account_id).upper()
    aid = f"K{key}" if key.isdigit() else key
    account = world["accounts"].get(aid)
    if account is None:
        raise ToolError(f"No account {account_id!r}.", kind="not_found")
    return aid, account


def _depot_code(world: World, depot: str) -> str:
    text = depot.strip().casefold()
    for code, record in world["network"]["depots"].items():
        names = {code.casefold(), record["name"].casefold(), record["city"].casefold()}
        if text in names or text.replace(" depot", "") in names:
            return str(code)
    for code, record in world["network"]["depots"].items():
        if text.startswith(code.casefold()) or record["name"].casefold().endswith(text):
            return str(code)
    known = ", ".join(sorted(world["network"]["depots"]))
    raise ToolError(f"No depot {depot!r}; depots: {known}.", kind="not_found")


def _place(world: World, where: str) -> dict[str, Any]:
    """A point from a depot code, a site id, "lat,lon", or a known street address."""
    text = where.strip()
    coords = re.fullmatch(r"\(?\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\)?", text)
    if coords:
        lat, lon = float(coords.group(1)), float(coords.group(2))
        return {"label": f"{lat:.4f},{lon:.4f}", "lat": lat, "lon": lon}
    key = text.upper().replace(" ", "")
    if key in world["sites"]:
        site = world["sites"][key]
        return {
            "label": f"{key} {site['name']}, {site['address']}, {site['city']}",
            "site_id": key,
            "lat": site["lat"],
            "lon": site["lon"],
        }
    wanted = " ".join(text.casefold().replace(",", " ").split())
    for sid, site in world["sites"].items():
        line = f"{site['address']} {site['city']}".casefold()
        if wanted == site["address"].casefold() or wanted.startswith(line):
            return {
                "label": f"{sid} {site['name']}, {site['address']}, {site['city']}",
                "site_id": sid,
                "lat": site["lat"],
                "lon": site["lon"],
            }
    for code, depot in world["network"]["depots"].items():
        if wanted.startswith(depot["address"].casefold()):
            return {"label": f"{code} {depot['name']}", "lat": depot["lat"], "lon": depot["lon"]}
    try:
        code = _depot_code(world, text)
    except ToolError:
        raise ToolError(
            f'Could not geocode {where!r}: give a depot code, a site id (e.g. "S1042"), '
            'a street address on file, or "lat,lon".',
            kind="not_found",
        ) from None
    depot = world["network"]["depots"][code]
    return {"label": f"{code} {depot['name']}", "lat": depot["lat"], "lon": depot["lon"]}


def _road_km(a: Any, b: Any) -> float:
    dy = (a["lat"] - b["lat"]) * 111.2
    dx = (a["lon"] - b["lon"]) * 111.2 * 0.72
    return max(1.0, round(math.sqrt(dx * dx + dy * dy) * 1.25, 1))


def _drive_minutes(km: float) -> int:
    tenths = round(km * 10)
    if tenths <= 300:
        return 10 + -(-tenths * 60 // 400)
    return 10 + 45 + -(-(tenths - 300) * 60 // 880)


def _trip_hours(minutes: int) -> float:
    return -(-2 * minutes * 10 // 60) / 10


def _route(world: World, origin: Any, destination: Any) -> tuple[float, int]:
    km = _road_km(origin, destination)
    return km, _drive_minutes(km)


def _delivery_route(world: World, shipment: Any) -> tuple[float, int]:
    depot = world["network"]["depots"][shipment["origin_depot"]]
    site = world["sites"][shipment["consignee_site_id"]]
    return _route(world, depot, site)


def _hours_left(world: World, driver: Any, day: str) -> float:
    if driver["status"] != "active" or day in driver["days_off"]:
        return 0.0
    this = date.fromisoformat(day)

    def tenths_on(d: date) -> int:
        key = d.isoformat()
        return round(
            (driver["driven_hours"].get(key, 0.0) + driver["planned_hours"].get(key, 0.0)) * 10
        )

    week = sum(tenths_on(this - timedelta(days=i)) for i in range(7))
    daily = round(world["meta"]["daily_driving_limit_h"] * 10) - tenths_on(this)
    weekly = round(world["meta"]["weekly_driving_limit_h"] * 10) - week
    return max(0, min(daily, weekly)) / 10


def _driver_day(world: World, driver: Any, day: str) -> dict[str, Any]:
    this = date.fromisoformat(day)
    worked = [
        driver["driven_hours"].get(d, 0.0) + driver["planned_hours"].get(d, 0.0)
        for d in ((this - timedelta(days=i)).isoformat() for i in range(7))
    ]
    return {
        "date": day,
        "on_duty": driver["status"] == "active" and day not in driver["days_off"],
        "hours_that_day": round(worked[0], 1),
        "hours_7_days": round(sum(worked), 1),
        "hours_left": _hours_left(world, driver, day),
    }


def _available(vehicle: Any, day: str) -> bool:
    if vehicle["status"] == "active":
        return True
    until = vehicle["maintenance_until"]
    return until is not None and day > until


def _free(vehicle: Any, day: str) -> tuple[int, float]:
    load = vehicle["loads"].get(day) or {"kg": 0, "m3": 0.0}
    return vehicle["capacity_kg"] - load["kg"], round(vehicle["capacity_m3"] - load["m3"], 1)


def _consignee(world: World, site_id: str) -> dict[str, Any]:
    site = world["sites"][site_id]
    return {
        "site_id": site_id,
        "name": site["name"],
        "address": site["address"],
        "city": site["city"],
        "state": site["state"],
        "zip": site["zip"],
        "type": site["type"],
        "loading_dock": site["dock"],
        "contact": site["contact"],
        "mobile": site["mobile"],
        "email": site["email"],
    }


def _history(world: World, shipment: Any, event: str) -> None:
    shipment["history"].append({"on": _today(world), "event": event})


def _release_vehicle(world: World, sid: str, shipment: Any) -> str | None:
    """Take a shipment off its vehicle: free the load and the driver's planned hours."""
    vid = shipment["vehicle_id"]
    if vid is None:
        return None
    day = shipment["delivery_window"]["date"]
    vehicle = world["vehicles"][vid]
    load = vehicle["loads"].get(day)
    if load is not None and sid in load["shipments"]:
        load["shipments"].remove(sid)
        load["kg"] -= shipment["weight_kg"]
        load["m3"] = round(load["m3"] - shipment["volume_m3"], 1)
        if not load["shipments"]:
            del vehicle["loads"][day]
    did = shipment["driver_id"]
    if did is not None:
        _, minutes = _delivery_route(world, shipment)
        planned = world["drivers"][did]["planned_hours"]
        left = round(planned.get(day, 0.0) - _trip_hours(minutes), 1)
        if left > 0:
            planned[day] = left
        else:
            planned.pop(day, None)
    shipment.update({"vehicle_id": None, "driver_id": None, "planned_departure": None, "eta": None})
    return str(vid)


def _release_slot(world: World, sid: str, shipment: Any) -> str | None:
    """Take a shipment off its mainframe dock slot, if it holds one."""
    slot_id = shipment["dock_slot"]
    slot = world["mainframe"]["slots"].get(slot_id) if slot_id else None
    if slot is None or sid not in slot["SHPMTS"]:
        return None
    slot["SHPMTS"].remove(sid)
    slot["BKD_KG"] -= shipment["weight_kg"]
    if slot["STAT"] == "FULL" and slot["BKD_KG"] < slot["CAP_KG"]:
        slot["STAT"] = "OPEN"
    return str(slot_id)


def _invoice_view(invoice: Any) -> dict[str, Any]:
    return {
        "number": invoice["number"],
        "amount": invoice["amount"],
        "status": invoice["status"],
        "lines": [dict(line) for line in invoice["lines"]],
        "adjustments": [dict(a) for a in invoice["adjustments"]],
    }


def _quote(
    world: World,
    km: float,
    weight_kg: float,
    volume_m3: float,
    service: str,
    extras: list[str],
    residential: bool,
    discount_percent: int,
) -> tuple[int, list[dict[str, Any]]]:
    """(total, lines) in cents: the rate card applied as the pricing engine does."""
    rates = world["network"]["rates"]
    card = rates["service_levels"][service]
    chargeable = max(math.ceil(weight_kg), round(volume_m3 * 10) * rates["dim_kg_per_m3"] // 10)
    base = card["base"]
    distance = (round(km * 10) * card["per_km"] + 5) // 10
    weight = chargeable * card["per_kg"]
    lines = [
        {"code": "BASE", "description": f"{service} service", "cents": base},
        {"code": "DISTANCE", "description": f"{km} km", "cents": distance},
        {"code": "WEIGHT", "description": f"{chargeable} kg chargeable", "cents": weight},
    ]
    discount = ((base + distance + weight) * discount_percent + 50) // 100
    if discount:
        lines.append(
            {
                "code": "CONTRACT_DISCOUNT",
                "description": f"{discount_percent}% contract discount",
                "cents": -discount,
            }
        )
    for name in (["residential"] if residential else []) + sorted(set(extras)):
        lines.append(
            {
                "code": name.upper(),
                "description": f"{name} surcharge",
                "cents": rates["surcharges"][name],
            }
        )
    fuel = (distance * rates["fuel_percent_tenths"] + 500) // 1000
    lines.append({"code": "FUEL", "description": "fuel surcharge 14.5%", "cents": fuel})
    return sum(line["cents"] for line in lines), lines


def _priced_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"code": x["code"], "description": x["description"], "amount": _dollars(x["cents"])}
        for x in lines
    ]


def _window(world: World, day: str, window_from: str, window_to: str) -> dict[str, str]:
    lo, hi = _time(window_from, "window_from"), _time(window_to, "window_to")
    if hi <= lo:
        raise ToolError("The window must end after it starts.", kind="invalid_window")
    if date.fromisoformat(day).weekday() >= 5:
        raise ToolError(
            f"{day} is a {date.fromisoformat(day):%A}; deliveries run Monday to Friday.",
            kind="invalid_date",
        )
    if day < _today(world):
        raise ToolError(f"{day} is in the past.", kind="invalid_date")
    return {"date": day, "from": _clock(lo), "to": _clock(hi)}


# ---------------------------------------------------------------- auth


@tool
def refresh_token() -> Any:
    """Get a fresh OAuth access token for the shipment system's API.

    Tokens last an hour. When a call fails with token_expired, call this and retry the call;
    the gateway attaches the new token by itself.
    """
    return {"access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 3600}


# ---------------------------------------------------------------- shipments


@tool
def get_shipment(world: World, shipment_id: str) -> Any:
    """Get a shipment: account, consignee, cargo, service level, delivery window, status,
    dock slot, vehicle and driver, planned departure and ETA, invoice and history.

    Statuses: booked (not dispatched yet), planned (dock slot and vehicle assigned),
    in_transit, delivered, exception (delivery failed, see `exception`), cancelled, on_hold.

    Args:
        shipment_id: The shipment number, e.g. "SH40123".
    """
    sid, shipment = _shipment(world, shipment_id)
    account = world["accounts"][shipment["account_id"]]
    view = {"shipment_id": sid, **shipment}
    view["account_name"] = account["name"]
    view["consignee"] = _consignee(world, shipment["consignee_site_id"])
    view["invoice"] = _invoice_view(shipment["invoice"])
    return view


@tool
def find_shipments(
    world: World,
    account_id: str | None = None,
    reference: str | None = None,
    status: ShipmentStatus | None = None,
    date: str | None = None,
) -> Any:
    """Search shipments by account, customer reference, status or delivery date.

    Give an account id or a reference. Results are sorted by delivery date.

    Args:
        account_id: The customer account, e.g. "K1007".
        reference: The customer's own reference, e.g. "PO-558812".
        status: Only shipments with this status.
        date: Only deliveries on this date, e.g. "2026-12-02".
    """
    if not account_id and not reference:
        raise ToolError("Give an account_id or a reference.", kind="invalid_request")
    aid = _account(world, account_id)[0] if account_id else None
    ref = re.sub(r"\s", "", reference).upper() if reference else None
    if ref and not ref.startswith("PO-"):
        ref = "PO-" + ref.removeprefix("PO")
    day = _date(world, date) if date else None
    found = []
    for sid, s in world["shipments"].items():
        if aid and s["account_id"] != aid:
            continue
        if ref and s["reference"] != ref:
            continue
        if status and s["status"] != status:
            continue
        if day and s["delivery_window"]["date"] != day:
            continue
        site = world["sites"][s["consignee_site_id"]]
        found.append(
            {
                "shipment_id": sid,
                "reference": s["reference"],
                "status": s["status"],
                "delivery_window": dict(s["delivery_window"]),
                "consignee": f"{site['name']}, {site['city']}",
                "weight_kg": s["weight_kg"],
                "service_level": s["service_level"],
            }
        )
    found.sort(key=lambda r: (r["delivery_window"]["date"], r["shipment_id"]))
    return {"shipments": found, "count": len(found)}


@tool(write=True)
def create_shipment(
    world: World,
    account_id: str,
    consignee_site_id: str,
    weight_kg: float,
    volume_m3: float,
    pieces: int,
    service_level: ServiceLevel,
    date: str,
    window_from: str,
    window_to: str,
    extras: list[Extra] | None = None,
) -> Any:
    """Book a new shipment from the account's home depot to a consignee site.

    The shipment is priced by the pricing engine (the same as quote_price) and invoiced to
    the account. It is created as booked: dispatch (dock slot, vehicle) comes after.

    Args:
        account_id: The customer account, e.g. "K1007".
        consignee_site_id: The delivery site, e.g. "S1042".
        weight_kg: Total weight in kilograms.
        volume_m3: Total volume in cubic metres.
        pieces: Number of pieces (parcels, pallets).
        service_level: economy (8-hour window), standard (4-hour) or express (2-hour).
        date: Delivery date, e.g. "2026-12-03".
        window_from: Start of the delivery window, e.g. "10:00".
        window_to: End of the delivery window, e.g. "14:00".
        extras: Surcharged options: liftgate, hazmat.
    """
    aid, account = _account(world, account_id)
    site_id = consignee_site_id.strip().upper()
    site = world["sites"].get(site_id)
    if site is None:
        raise ToolError(f"No site {consignee_site_id!r}.", kind="not_found")
    depot = account["home_depot"]
    if site["depot"] != depot:
        raise ToolError(
            f"{site_id} ({site['city']}) is outside the delivery area of depot {depot}.",
            kind="out_of_area",
        )
    if weight_kg <= 0 or volume_m3 <= 0 or pieces < 1:
        raise ToolError("Weight, volume and pieces must be positive.", kind="invalid_request")
    window = _window(world, _date(world, date), window_from, window_to)
    km, _ = _route(world, world["network"]["depots"][depot], site)
    total, lines = _quote(
        world,
        km,
        weight_kg,
        volume_m3,
        service_level,
        list(extras or []),
        site["type"] == "residential",
        account["discount_percent"],
    )
    shipments = world["shipments"]
    sid = f"SH{max(int(k[2:]) for k in shipments) + 1}"
    invoice_no = max(int(s["invoice"]["number"][4:]) for s in shipments.values()) + 1
    shipments[sid] = {
        "account_id": aid,
        "reference": None,
        "origin_depot": depot,
        "consignee_site_id": site_id,
        "service_level": service_level,
        "pieces": pieces,
        "weight_kg": weight_kg,
        "volume_m3": round(volume_m3, 1),
        "extras": sorted(set(extras or [])),
        "delivery_window": window,
        "status": "booked",
        "dock_slot": None,
        "vehicle_id": None,
        "driver_id": None,
        "planned_departure": None,
        "eta": None,
        "delivered_at": None,
        "invoice": {
            "number": f"INV-{invoice_no}",
            "amount": _dollars(total),
            "lines": _priced_lines(lines),
            "status": "open",
            "adjustments": [],
        },
        "booked_on": _today(world),
        "history": [{"on": _today(world), "event": "booked"}],
    }
    return {
        "shipment_id": sid,
        "status": "booked",
        "origin_depot": depot,
        "delivery_window": window,
        "invoice_number": f"INV-{invoice_no}",
        "price": _dollars(total),
    }


@tool(write=True)
def reschedule_delivery(
    world: World, shipment_id: str, date: str, window_from: str, window_to: str
) -> Any:
    """Move a shipment's delivery to a new date and/or time window.

    Only booked or planned shipments. A planned shipment loses its vehicle and driver (they
    were planned for the old window); its dock slot stays booked in the mainframe until it
    is moved with mainframe_book_slot.

    Args:
        shipment_id: The shipment number, e.g. "SH40123".
        date: The new delivery date, e.g. "2026-12-04".
        window_from: Start of the new window, e.g. "08:00".
        window_to: End of the new window, e.g. "12:00".
    """
    sid, shipment = _shipment(world, shipment_id)
    if shipment["status"] not in OPEN_STATUSES:
        raise ToolError(
            f"Shipment {sid} is {shipment['status']}; only booked or planned shipments can be "
            "rescheduled.",
            kind="invalid_state",
        )
    old = dict(shipment["delivery_window"])
    new = _window(world, _date(world, date), window_from, window_to)
    released = _release_vehicle(world, sid, shipment)
    shipment["delivery_window"] = new
    shipment["status"] = "booked"
    _history(world, shipment, f"rescheduled from {old['date']} {old['from']}-{old['to']}")
    result: dict[str, Any] = {
        "shipment_id": sid,
        "status": "booked",
        "old_window": old,
        "delivery_window": new,
        "dock_slot": shipment["dock_slot"],
    }
    if released:
        result["released_vehicle_id"] = released
        result["note"] = (
            "The vehicle assignment was released. The dock slot is unchanged in the "
            "mainframe: book one for the new window, then assign a vehicle."
        )
    return result


@tool(write=True)
def update_shipment_status(
    world: World,
    shipment_id: str,
    status: Literal["cancelled", "on_hold", "booked"],
    reason: Literal["customer_request", "freight_not_ready", "consignee_closed"] = (
        "customer_request"
    ),
) -> Any:
    """Cancel a shipment, put it on hold, or release a held shipment (back to booked).

    Cancelling or holding a booked or planned shipment releases its vehicle, its driver's
    hours and its dock slot in the mainframe; cancelling voids an open invoice. Shipments in
    transit or delivered cannot change here.

    Args:
        shipment_id: The shipment number, e.g. "SH40123".
        status: cancelled, on_hold, or booked (to release a shipment on hold).
        reason: Why, as a reason code.
    """
    sid, shipment = _shipment(world, shipment_id)
    current = shipment["status"]
    if status == "booked":
        if current != "on_hold":
            raise ToolError(f"Shipment {sid} is {current}, not on hold.", kind="invalid_state")
    elif current not in (*OPEN_STATUSES, "on_hold"):
        raise ToolError(
            f"Shipment {sid} is {current}; it can no longer be {status.replace('_', ' ')}.",
            kind="invalid_state",
        )
    released = {"vehicle_id": _release_vehicle(world, sid, shipment)}
    released["dock_slot"] = _release_slot(world, sid, shipment)
    if released["dock_slot"]:
        shipment["dock_slot"] = None
    shipment["status"] = status
    if status == "cancelled" and shipment["invoice"]["status"] == "open":
        shipment["invoice"]["status"] = "void"
    _history(world, shipment, f"{status.replace('_', ' ')}: {reason.replace('_', ' ')}")
    return {
        "shipment_id": sid,
        "status": status,
        "released": {k: v for k, v in released.items() if v},
        "invoice_status": shipment["invoice"]["status"],
    }


@tool(write=True)
def adjust_invoice(
    world: World,
    shipment_id: str,
    new_amount: float,
    reason: Literal["billing_error", "service_failure"],
) -> Any:
    """Lower the open invoice of a shipment to a new amount (a credit for the difference).

    Paid or void invoices cannot be adjusted here.

    Args:
        shipment_id: The shipment number, e.g. "SH40123".
        new_amount: The corrected invoice total in dollars, e.g. 231.75.
        reason: billing_error (the invoice was priced wrong) or service_failure.
    """
    sid, shipment = _shipment(world, shipment_id)
    invoice = shipment["invoice"]
    if invoice["status"] != "open":
        raise ToolError(
            f"Invoice {invoice['number']} is {invoice['status']}; only open invoices can be "
            "adjusted.",
            kind="invalid_state",
        )
    new = _cents(new_amount)
    old = _cents(invoice["amount"])
    if not 0 <= new < old:
        raise ToolError(
            f"The new amount must be below the current {_money(invoice['amount'])} and not "
            "negative.",
            kind="invalid_amount",
        )
    adjustment = {
        "on": _today(world),
        "from": _dollars(old),
        "to": _dollars(new),
        "credit": _dollars(old - new),
        "reason": reason,
    }
    invoice["adjustments"].append(adjustment)
    invoice["amount"] = _dollars(new)
    _history(world, shipment, f"invoice adjusted: {reason.replace('_', ' ')}")
    return {"shipment_id": sid, "invoice": invoice["number"], **adjustment}


# ---------------------------------------------------------------- routing


@tool
def get_route(world: World, origin: str, destination: str, depart_at: str | None = None) -> Any:
    """Road route between two places: distance, driving time, and the ETA for a departure.

    Places are depot codes ("PDX"), site ids ("S1042"), street addresses on file
    ("4512 Main St, Salem") or GPS coordinates ("45.5201,-122.6544").

    Args:
        origin: Where the vehicle starts.
        destination: Where it goes.
        depart_at: Departure time, e.g. "08:45"; the result then has the ETA.
    """
    a, b = _place(world, origin), _place(world, destination)
    km, minutes = _route(world, a, b)
    result: dict[str, Any] = {
        "origin": a["label"],
        "destination": b["label"],
        "distance_km": km,
        "drive_minutes": minutes,
        "round_trip_hours": _trip_hours(minutes),
    }
    if depart_at is not None:
        text = depart_at.strip()
        day = None
        if " " in text and re.match(r"\d{4}-\d{2}-\d{2} ", text):
            day, text = text.split(" ", 1)
        start = _time(text, "depart_at")
        result["depart_at"] = _clock(start)
        eta = start + minutes
        result["eta"] = f"{day} {_clock(eta)}" if day else _clock(eta)
    return result


# ---------------------------------------------------------------- fleet


@tool
def list_vehicles(
    world: World,
    depot: str,
    date: str | None = None,
    vehicle_type: VehicleType | None = None,
    min_free_kg: float | None = None,
) -> Any:
    """List a depot's vehicles for a day, smallest first: capacity, what is still free that
    day, availability, and the regular driver with the driving hours they have left.

    Vehicle types and the licence they need: van (B), box_truck (C), tractor_trailer (CE).

    Args:
        depot: The depot code, e.g. "PDX".
        date: The day, e.g. "2026-12-02"; today when omitted.
        vehicle_type: Only this type.
        min_free_kg: Only vehicles with at least this much free payload that day.
    """
    code = _depot_code(world, depot)
    day = _date(world, date)
    rows = []
    for vid, v in world["vehicles"].items():
        if v["depot"] != code or (vehicle_type and v["type"] != vehicle_type):
            continue
        free_kg, free_m3 = _free(v, day)
        if min_free_kg is not None and free_kg < min_free_kg:
            continue
        did = v["regular_driver_id"]
        driver = world["drivers"][did]
        load = v["loads"].get(day) or {"shipments": []}
        rows.append(
            {
                "vehicle_id": vid,
                "type": v["type"],
                "capacity_kg": v["capacity_kg"],
                "capacity_m3": v["capacity_m3"],
                "available": _available(v, day),
                "free_kg": free_kg,
                "free_m3": free_m3,
                "shipments": list(load["shipments"]),
                "regular_driver": {
                    "driver_id": did,
                    "name": driver["name"],
                    "hours_left": _hours_left(world, driver, day),
                },
            }
        )
    rows.sort(key=lambda r: (r["capacity_kg"], int(r["vehicle_id"][1:])))
    return {"depot": code, "date": day, "vehicles": rows}


@tool
def get_vehicle(world: World, vehicle_id: str, date: str | None = None) -> Any:
    """Get a vehicle: type, capacity, status, last GPS position, regular driver, and its load
    and shipments on a day.

    Args:
        vehicle_id: The vehicle id, e.g. "V114".
        date: The day, e.g. "2026-12-02"; today when omitted.
    """
    vid, v = _vehicle(world, vehicle_id)
    day = _date(world, date)
    free_kg, free_m3 = _free(v, day)
    load = v["loads"].get(day) or {"kg": 0, "m3": 0.0, "shipments": []}
    return {
        "vehicle_id": vid,
        "depot": v["depot"],
        "type": v["type"],
        "model": v["model"],
        "plate": v["plate"],
        "licence_required": v["licence_required"],
        "capacity_kg": v["capacity_kg"],
        "capacity_m3": v["capacity_m3"],
        "status": v["status"],
        "maintenance_until": v["maintenance_until"],
        "gps": dict(v["gps"]),
        "regular_driver_id": v["regular_driver_id"],
        "date": day,
        "available": _available(v, day),
        "load_kg": load["kg"],
        "load_m3": load["m3"],
        "free_kg": free_kg,
        "free_m3": free_m3,
        "shipments": list(load["shipments"]),
    }


@tool
def get_driver(world: World, driver_id: str, date: str | None = None) -> Any:
    """Get a driver: depot, licences, status, driving hours on a day, and that day's
    delivery runs (shipments) and depot-to-depot linehaul runs.

    Limits: 11 driving hours a day and 60 in any 7 consecutive days. `hours_left` is what
    the driver may still drive that day under both limits.

    Args:
        driver_id: The driver id, e.g. "D214".
        date: The day, e.g. "2026-12-02"; today when omitted.
    """
    did, d = _driver(world, driver_id)
    day = _date(world, date)
    assigned = [
        sid
        for sid, s in world["shipments"].items()
        if s["driver_id"] == did and s["delivery_window"]["date"] == day
    ]
    return {
        "driver_id": did,
        "name": d["name"],
        "depot": d["depot"],
        "licences": list(d["licences"]),
        "status": d["status"],
        "days_off": list(d["days_off"]),
        "phone": d["phone"],
        "hours": _driver_day(world, d, day),
        "shipments": assigned,
        "linehauls": [dict(x) for x in d["linehauls"] if x["date"] == day],
    }


@tool
def list_drivers(
    world: World, depot: str, date: str | None = None, licence: Licence | None = None
) -> Any:
    """List a depot's drivers for a day, most driving hours left first.

    Args:
        depot: The depot code, e.g. "PDX".
        date: The day, e.g. "2026-12-02"; today when omitted.
        licence: Only drivers holding this licence: B (van), C (box truck), CE (tractor).
    """
    code = _depot_code(world, depot)
    day = _date(world, date)
    rows = [
        {
            "driver_id": did,
            "name": d["name"],
            "licences": list(d["licences"]),
            **_driver_day(world, d, day),
        }
        for did, d in world["drivers"].items()
        if d["depot"] == code and (licence is None or licence in d["licences"])
    ]
    rows.sort(key=lambda r: (-r["hours_left"], int(r["driver_id"][1:])))
    return {"depot": code, "date": day, "drivers": rows}


@tool(write=True)
def assign_vehicle(
    world: World, shipment_id: str, vehicle_id: str, driver_id: str | None = None
) -> Any:
    """Assign a shipment to a vehicle and driver for its delivery day (or move it to another).

    The shipment must hold a dock slot: the vehicle leaves 60 minutes after the slot opens.
    The driver is the vehicle's regular driver unless one is given. The fleet system checks
    the depot, the vehicle's availability and free capacity, and the driver's licence.

    Args:
        shipment_id: The shipment number, e.g. "SH40123".
        vehicle_id: The vehicle, e.g. "V114".
        driver_id: A driver other than the vehicle's regular driver, e.g. "D214".
    """
    sid, shipment = _shipment(world, shipment_id)
    vid, vehicle = _vehicle(world, vehicle_id)
    if shipment["status"] not in OPEN_STATUSES:
        raise ToolError(
            f"Shipment {sid} is {shipment['status']}; only booked or planned shipments can be "
            "assigned.",
            kind="invalid_state",
        )
    slot_id = shipment["dock_slot"]
    day = shipment["delivery_window"]["date"]
    if not slot_id or slot_id.split("/")[1] != _mf_date(day):
        raise ToolError(
            f"Shipment {sid} has no dock slot for {day}: book one with mainframe_book_slot first.",
            kind="invalid_state",
        )
    if vehicle["depot"] != shipment["origin_depot"]:
        raise ToolError(
            f"{vid} is based at {vehicle['depot']}; {sid} leaves from {shipment['origin_depot']}.",
            kind="wrong_depot",
        )
    if not _available(vehicle, day):
        raise ToolError(
            f"{vid} is in maintenance until {vehicle['maintenance_until']}.",
            kind="vehicle_unavailable",
        )
    did, driver = _driver(world, driver_id or vehicle["regular_driver_id"])
    if driver["depot"] != vehicle["depot"]:
        raise ToolError(f"Driver {did} is based at {driver['depot']}.", kind="wrong_depot")
    if vehicle["licence_required"] not in driver["licences"]:
        raise ToolError(
            f"Driver {did} holds {'/'.join(driver['licences'])}; a {vehicle['type']} needs "
            f"{vehicle['licence_required']}.",
            kind="licence_mismatch",
        )
    if driver["status"] != "active" or day in driver["days_off"]:
        raise ToolError(f"Driver {did} is off duty on {day}.", kind="driver_unavailable")
    free_kg, free_m3 = _free(vehicle, day)
    if shipment["vehicle_id"] == vid:
        free_kg += shipment["weight_kg"]
        free_m3 = round(free_m3 + shipment["volume_m3"], 1)
    if free_kg < shipment["weight_kg"] or free_m3 < shipment["volume_m3"]:
        raise ToolError(
            f"{vid} has {free_kg} kg / {free_m3} m3 free on {day}; {sid} needs "
            f"{shipment['weight_kg']} kg / {shipment['volume_m3']} m3.",
            kind="capacity_exceeded",
        )
    previous = _release_vehicle(world, sid, shipment)
    load = vehicle["loads"].setdefault(day, {"kg": 0, "m3": 0.0, "shipments": []})
    load["kg"] += shipment["weight_kg"]
    load["m3"] = round(load["m3"] + shipment["volume_m3"], 1)
    load["shipments"].append(sid)
    km, minutes = _delivery_route(world, shipment)
    hours = _trip_hours(minutes)
    planned = driver["planned_hours"]
    planned[day] = round(planned.get(day, 0.0) + hours, 1)
    departure = _minutes_of(slot_id.split("/")[3]) + LOADING_MINUTES
    eta = departure + minutes
    window = shipment["delivery_window"]
    shipment.update(
        {
            "status": "planned",
            "vehicle_id": vid,
            "driver_id": did,
            "planned_departure": f"{day} {_clock(departure)}",
            "eta": f"{day} {_clock(eta)}",
        }
    )
    _history(world, shipment, f"planned on {vid}")
    result = {
        "shipment_id": sid,
        "status": "planned",
        "vehicle_id": vid,
        "driver_id": did,
        "driver_name": driver["name"],
        "dock_slot": slot_id,
        "planned_departure": shipment["planned_departure"],
        "eta": shipment["eta"],
        "within_window": _minutes_of(window["from"]) <= eta <= _minutes_of(window["to"]),
        "trip_hours": hours,
        "distance_km": km,
    }
    if previous and previous != vid:
        result["previous_vehicle_id"] = previous
    return result


@tool(write=True)
def unassign_vehicle(world: World, shipment_id: str) -> Any:
    """Take a planned shipment off its vehicle and driver (back to booked). The dock slot
    stays booked.

    Args:
        shipment_id: The shipment number, e.g. "SH40123".
    """
    sid, shipment = _shipment(world, shipment_id)
    if shipment["status"] != "planned":
        raise ToolError(
            f"Shipment {sid} is {shipment['status']}; only planned shipments have a vehicle "
            "to release.",
            kind="invalid_state",
        )
    vid = _release_vehicle(world, sid, shipment)
    shipment["status"] = "booked"
    _history(world, shipment, f"unassigned from {vid}")
    return {"shipment_id": sid, "status": "booked", "released_vehicle_id": vid}


# ---------------------------------------------------------------- pricing


@tool
def quote_price(
    world: World,
    origin_depot: str,
    destination: str,
    weight_kg: float,
    service_level: ServiceLevel,
    volume_m3: float | None = None,
    extras: list[Extra] | None = None,
    account_id: str | None = None,
) -> Any:
    """Price a delivery with the rate card: base, distance, chargeable weight, contract
    discount, surcharges and fuel.

    Chargeable weight is the larger of the actual weight and the volume x 250 kg/m3. A
    residential destination adds its surcharge by itself. The account's contract discount
    applies to base, distance and weight.

    Args:
        origin_depot: The depot the freight leaves from, e.g. "PDX".
        destination: The consignee site id ("S1042") or a street address on file.
        weight_kg: Actual weight in kilograms.
        service_level: economy, standard or express.
        volume_m3: Volume in cubic metres, for the dimensional weight.
        extras: Surcharged options: liftgate, hazmat.
        account_id: The customer account, for its contract discount, e.g. "K1007".
    """
    code = _depot_code(world, origin_depot)
    place = _place(world, destination)
    site = world["sites"].get(place.get("site_id", ""))
    if site is None:
        raise ToolError(
            f"{destination!r} is not a delivery site on file; quotes need a site.",
            kind="not_found",
        )
    discount = _account(world, account_id)[1]["discount_percent"] if account_id else 0
    km, _ = _route(world, world["network"]["depots"][code], site)
    total, lines = _quote(
        world,
        km,
        weight_kg,
        volume_m3 or 0.0,
        service_level,
        list(extras or []),
        site["type"] == "residential",
        discount,
    )
    return {
        "origin_depot": code,
        "destination": place["label"],
        "service_level": service_level,
        "distance_km": km,
        "lines": _priced_lines(lines),
        "total": _dollars(total),
        "currency": world["network"]["rates"]["currency"],
    }


# ---------------------------------------------------------------- notifications


def _notice_body(world: World, template: str, sid: str, shipment: Any) -> str:
    company = world["meta"]["company"]
    window = shipment["delivery_window"]
    when = f"{window['date']} between {window['from']} and {window['to']}"
    eta = shipment["eta"].split(" ")[1] if shipment["eta"] else None
    if template == "dispatch_confirmed":
        if shipment["status"] != "planned":
            raise ToolError(f"Shipment {sid} is not planned.", kind="invalid_state")
        text = f"your delivery {sid} is scheduled for {when}, expected at {eta}."
    elif template == "delivery_rescheduled":
        text = f"your delivery {sid} has been rescheduled to {when}."
        if eta:
            text += f" Expected at {eta}."
    elif template == "eta_update":
        if shipment["status"] != "in_transit":
            raise ToolError(f"Shipment {sid} is not in transit.", kind="invalid_state")
        vehicle = world["vehicles"][shipment["vehicle_id"]]
        site = world["sites"][shipment["consignee_site_id"]]
        _, minutes = _route(world, vehicle["gps"], site)
        gps_time = _minutes_of(vehicle["gps"]["at"].split(" ")[1])
        text = f"your delivery {sid} is on its way, expected at {_clock(gps_time + minutes)}."
    elif template == "shipment_cancelled":
        if shipment["status"] != "cancelled":
            raise ToolError(f"Shipment {sid} is not cancelled.", kind="invalid_state")
        text = f"shipment {sid} ({shipment['reference'] or 'no reference'}) has been cancelled."
    else:
        invoice = shipment["invoice"]
        if not invoice["adjustments"]:
            raise ToolError(f"Invoice of {sid} has no adjustment.", kind="invalid_state")
        last = invoice["adjustments"][-1]
        text = (
            f"invoice {invoice['number']} for shipment {sid} was adjusted from "
            f"{_money(last['from'])} to {_money(last['to'])}."
        )
    return f"{company}: {text[0].upper()}{text[1:]}"


@tool(write=True)
def notify_customer(
    world: World,
    shipment_id: str,
    template: Template,
    channel: Literal["sms", "email"] = "sms",
) -> Any:
    """Send a pre-approved notice about a shipment, filled in from the shipment as it is now.

    Delivery notices (dispatch_confirmed, delivery_rescheduled, eta_update) go to the
    consignee: by SMS to their mobile, or by email. Account notices (shipment_cancelled,
    invoice_adjusted) go to the shipper: SMS to the account contact's phone, or email (an
    invoice notice by email goes to the billing address).

    Args:
        shipment_id: The shipment number, e.g. "SH40123".
        template: Which notice to send.
        channel: sms or email.
    """
    sid, shipment = _shipment(world, shipment_id)
    body = _notice_body(world, template, sid, shipment)
    account = world["accounts"][shipment["account_id"]]
    site = world["sites"][shipment["consignee_site_id"]]
    if template in ("shipment_cancelled", "invoice_adjusted"):
        if channel == "sms":
            to = account["contact"]["phone"]
        elif template == "invoice_adjusted":
            to = account["billing_email"]
        else:
            to = account["contact"]["email"]
    elif channel == "sms":
        to = site["mobile"]
        if not to:
            raise ToolError(
                f"The consignee of {sid} has no mobile number on file.", kind="invalid_recipient"
            )
    else:
        to = site["email"]
    outbox = world["notifications"]
    notice = {
        "id": f"N{len(outbox) + 1:06d}",
        "shipment_id": sid,
        "template": template,
        "channel": channel,
        "to": to,
        "body": body,
        "sent_on": _today(world),
    }
    outbox.append(notice)
    return {**notice, "status": "queued"}


# ---------------------------------------------------------------- DISPATCH/390 mainframe


@tool
def mainframe_manifest_lookup(world: World, depot: str, date: str) -> Any:
    """Read a depot's loading-dock manifest for a day from DISPATCH/390, the mainframe that
    books every dock slot.

    Each slot: SLOT_ID, DOCK (D1-D4), WIN (loading window "HHMM-HHMM"), CAP_KG, BKD_KG
    (booked, including cross-dock freight), STAT (OPEN, FULL, CLSD), SHPMTS (our shipments
    on it), RMK. Manifests exist for business days from today to 14 days ahead.

    Args:
        depot: The depot code, e.g. "PDX".
        date: The day, e.g. "2026-12-02" (the mainframe also takes "20261202").
    """
    code = _depot_code(world, depot)
    day = _mf_date(_date(world, date))
    slots = [
        {k: (list(v) if isinstance(v, list) else v) for k, v in slot.items() if k != "DEPOT"}
        for slot_id, slot in world["mainframe"]["slots"].items()
        if slot_id.startswith(f"{code}/{day}/")
    ]
    if not slots:
        raise ToolError(f"DSP0404 NO MANIFEST DEPOT={code} DT={day}", kind="not_found")
    slots.sort(key=lambda s: (s["WIN"], s["DOCK"]))
    return {"RC": "0000", "SYS": "DISPATCH/390", "DEPOT": code, "MFST_DT": day, "SLOTS": slots}


@tool(write=True)
def mainframe_book_slot(world: World, slot_id: str, shipment_id: str) -> Any:
    """Book a shipment onto a loading-dock slot in DISPATCH/390.

    A shipment holds one slot: booking another moves it there. The slot must be OPEN with
    room for the shipment's weight, at its origin depot on its delivery date, and the
    shipment must not have a vehicle yet (unassign it first).

    Args:
        slot_id: The slot, e.g. "PDX/20261202/D2/0800".
        shipment_id: The shipment number, e.g. "SH40123".
    """
    key = re.sub(r"\s", "", slot_id).upper()
    slot = world["mainframe"]["slots"].get(key)
    if slot is None:
        raise ToolError(f"DSP0404 SLOT NOT FOUND SLOT_ID={key}", kind="not_found")
    sid = _shipment_id(shipment_id)
    shipment = world["shipments"].get(sid)
    if shipment is None:
        raise ToolError(f"DSP0405 SHPMT NOT ON FILE SHPMT={sid}", kind="not_found")
    if shipment["status"] not in OPEN_STATUSES:
        raise ToolError(
            f"DSP0430 SHPMT STAT INVALID SHPMT={sid} STAT={shipment['status'].upper()}",
            kind="invalid_state",
        )
    if shipment["vehicle_id"]:
        raise ToolError(
            f"DSP0431 SHPMT ALREADY DISPATCHED SHPMT={sid} VEH={shipment['vehicle_id']} "
            "- UNASSIGN FIRST",
            kind="invalid_state",
        )
    if slot["DEPOT"] != shipment["origin_depot"]:
        raise ToolError(
            f"DSP0422 DEPOT MISMATCH SLOT={slot['DEPOT']} SHPMT={shipment['origin_depot']}",
            kind="invalid_request",
        )
    day = _mf_date(shipment["delivery_window"]["date"])
    if slot["MFST_DT"] != day:
        raise ToolError(
            f"DSP0423 DATE MISMATCH SLOT DT={slot['MFST_DT']} SHPMT DT={day}",
            kind="invalid_request",
        )
    if shipment["dock_slot"] == key and sid in slot["SHPMTS"]:
        raise ToolError(f"DSP0412 ALREADY BOOKED SHPMT={sid} SLOT_ID={key}", kind="conflict")
    if slot["STAT"] == "CLSD":
        raise ToolError(f"DSP0411 SLOT CLOSED SLOT_ID={key} RMK={slot['RMK']}", kind="conflict")
    if slot["STAT"] == "FULL":
        raise ToolError(f"DSP0409 SLOT FULL SLOT_ID={key}", kind="conflict")
    room = slot["CAP_KG"] - slot["BKD_KG"]
    if room < shipment["weight_kg"]:
        raise ToolError(
            f"DSP0410 INSUFF CAP SLOT_ID={key} REQ={shipment['weight_kg']} AVL={room}",
            kind="conflict",
        )
    previous = _release_slot(world, sid, shipment)
    slot["SHPMTS"].append(sid)
    slot["BKD_KG"] += shipment["weight_kg"]
    if slot["BKD_KG"] >= slot["CAP_KG"]:
        slot["STAT"] = "FULL"
    shipment["dock_slot"] = key
    _history(world, shipment, f"dock slot {key}")
    result = {
        "RC": "0000",
        "MSG": "DSP0200 SLOT BOOKED",
        "SLOT_ID": key,
        "SHPMT": sid,
        "WIN": slot["WIN"],
        "BKD_KG": slot["BKD_KG"],
        "CAP_KG": slot["CAP_KG"],
        "STAT": slot["STAT"],
    }
    if previous:
        result["PREV_SLOT"] = previous
    return result
