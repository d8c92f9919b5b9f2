"""The dispatch world: accounts, consignee sites, fleet, drivers, shipments and the mainframe.

`build(data)` turns the depot network and rate card (`data["network"]`) into four weeks of a
regional freight and courier business. Everything comes from one seeded random generator,
so the same network file always gives the same world.

Money is in dollars as floats rounded to cents; the arithmetic is done in cents. Distances
are road kilometres with one decimal, driving hours have one decimal. Dates are ISO strings
("2026-12-01") and times "HH:MM", depot local time, except in the mainframe, which speaks
like the IBM z/OS system it runs on ("20261201", "0800", upper-case field names).

The planning rules used to generate the history are the dispatch policy's rules, so what
the world shows is what a correct dispatcher would have done.
"""

from __future__ import annotations

import math
import random
from datetime import date, timedelta
from typing import Any

SEED = 20261201
TODAY = date(2026, 12, 1)  # a Tuesday
NOW = "11:05"
FIRST_DAY = date(2026, 11, 16)
LAST_DAY = date(2026, 12, 11)
MANIFEST_UNTIL = date(2026, 12, 15)
N_ACCOUNTS = 40
SITES_PER_DEPOT = 20
N_SHIPMENTS = 400

VEHICLE_TYPES: dict[str, dict[str, Any]] = {
    "van": {"capacity_kg": 1200, "capacity_m3": 11.0, "licence": "B", "model": "Ford Transit 350"},
    "box_truck": {"capacity_kg": 5500, "capacity_m3": 36.0, "licence": "C", "model": "Isuzu NRR"},
    "tractor_trailer": {
        "capacity_kg": 18000,
        "capacity_m3": 80.0,
        "licence": "CE",
        "model": "Freightliner Cascadia",
    },
}
FLEET_PER_DEPOT = ["van"] * 5 + ["box_truck"] * 3 + ["tractor_trailer"] * 2
DOCKS = {"D1": 6000, "D2": 6000, "D3": 6000, "D4": 12000}
SLOT_STARTS = ["0600", "0800", "1000", "1200", "1400", "1600"]
LOADING_MINUTES = 60
DAILY_LIMIT_H = 11.0
WEEKLY_LIMIT_H = 60.0
AREA_CODES = {"SEA": "206", "PDX": "503", "SPK": "509", "BOI": "208", "SLC": "801", "RNO": "775"}
PLATE_STATES = {"SEA": "WA", "PDX": "OR", "SPK": "WA", "BOI": "ID", "SLC": "UT", "RNO": "NV"}

FIRST_NAMES = [
    "Ana", "Bruno", "Carmen", "Dale", "Erin", "Fatima", "Gus", "Helen", "Ivan", "Jada",
    "Kurt", "Lena", "Marco", "Nina", "Omar", "Paula", "Reggie", "Sara", "Troy", "Vera",
    "Wes", "Yara", "Zack", "Alma", "Boris", "Celia", "Dev", "Elif", "Frank", "Gloria",
    "Hector", "Irene", "Jorge", "Kim", "Luis", "Mei", "Nate", "Olga", "Pete", "Rosa",
]  # fmt: skip
LAST_NAMES = [
    "Diaz", "Novak", "Sorensen", "Begay", "Okoro", "Lindqvist", "Ramirez", "Fong", "Haddad",
    "Kowalczyk", "Moreau", "Petrov", "Quintero", "Stewart", "Tran", "Vasquez", "Whitfield",
    "Yilmaz", "Abbott", "Castro", "Duarte", "Espinoza", "Gallagher", "Hale", "Iverson",
    "Jovanovic", "Keller", "Larsen", "Mendez", "Nguyen",
]  # fmt: skip
ACCOUNT_NAMES = [
    "Cascade Brewing Supply", "Ridgeline Medical", "Timberline Hardware",
    "Pacific Bolt & Fastener", "Summit Office Furniture", "Blue Heron Bakery Wholesale",
    "Northfork Outdoor", "Evergreen Lab Supply",
    "Basalt Stone Works", "Columbia Auto Parts", "Sagebrush Garden Center", "Wasatch Appliance",
    "High Desert Tile", "Gem State Feed", "Silver Lake Printing", "Great Basin Electrical",
    "Harbor Coffee Roasters", "Puget Paper Co.", "Larkspur Pharmacy Group", "Redwood Home Goods",
    "Falcon Fitness Equipment", "Quarry Creek Lumber", "Bright Path Schools Supply",
    "Alder & Pine Cabinetry",
    "Sierra Pool Supply", "Canyon Rim Motors", "Kodiak Industrial", "Meadowlark Florals",
    "Bridger Tools", "Juniper Vet Supply", "Osprey Marine", "Lumen Lighting Wholesale",
    "Cobalt Data Centers", "Willamette Wine Distributors", "Pinecrest Dental Supply",
    "Trailhead Bikes", "Iron Horse Rail Parts", "Golden Spike Grocers", "Tahoe Ski Rentals",
    "Owyhee Ranch Supply",
]  # fmt: skip
SITE_KINDS = [
    "Dental", "Clinic", "Hardware", "Cafe", "Builders", "Grocery", "Fitness", "Pharmacy",
    "Auto Repair", "Bakery", "Veterinary", "Printing", "School", "Brewery", "Bike Shop",
    "Florist", "Market", "Electric", "Plumbing", "Office",
]  # fmt: skip
SITE_PREFIXES = [
    "Northgate", "Lakeside", "Riverside", "Hilltop", "Old Town", "Westside", "Maple",
    "Cedar", "Granite", "Sunrise", "Valley", "Harbor", "Foothill", "Crossroads", "Eastgate",
    "Parkway", "Mill Creek", "Orchard", "Canyon", "Prairie",
]  # fmt: skip
STREETS = [
    "Main St", "Industrial Way", "Commerce Dr", "Oak Ave", "Pine St", "Railroad Ave", "1st Ave",
    "Broadway", "Depot Rd", "Center St", "Market St", "Airport Way", "Mill Rd", "Lake Dr",
    "Valley View Rd", "Front St", "Cherry Ln", "Harbor Blvd", "Ridge Rd", "Station St",
]  # fmt: skip


def build(data: dict[str, Any]) -> dict[str, Any]:
    """The company's collections, generated from the depot network (`data["network"]`)."""
    rng = random.Random(SEED)
    network = data["network"]
    depots = _depots(network)
    accounts = _accounts(rng, depots)
    sites = _sites(rng, network)
    vehicles, drivers = _fleet(rng, depots)
    mainframe = _mainframe(rng, depots)
    shipments = _shipments(rng, network, accounts, sites, vehicles, drivers, mainframe)
    _linehauls(random.Random(SEED + 1), drivers, vehicles)
    return {
        "accounts": accounts,
        "sites": sites,
        "vehicles": vehicles,
        "drivers": drivers,
        "shipments": shipments,
        "mainframe": mainframe,
        "notifications": [],
        "meta": {
            "company": "Kestrel Freight & Courier",
            "today": TODAY.isoformat(),
            "now": NOW,
            "daily_driving_limit_h": DAILY_LIMIT_H,
            "weekly_driving_limit_h": WEEKLY_LIMIT_H,
            "loading_minutes": LOADING_MINUTES,
        },
    }


# ---------------------------------------------------------------- helpers shared with tools.py
# tools.py keeps its own copy of these few formulas; `toolproof validate` replays gold actions
# against generated prices and routes, so the two cannot drift apart unnoticed.


def road_km(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Road distance between two points: straight line on a flat projection, times 1.25."""
    dy = (a["lat"] - b["lat"]) * 111.2
    dx = (a["lon"] - b["lon"]) * 111.2 * 0.72
    return max(1.0, round(math.sqrt(dx * dx + dy * dy) * 1.25, 1))


def drive_minutes(km: float) -> int:
    """Minutes at the wheel: 10 to get going, 40 km/h for the first 30 km, 88 km/h after."""
    tenths = round(km * 10)
    if tenths <= 300:
        return 10 + -(-tenths * 60 // 400)
    return 10 + 45 + -(-(tenths - 300) * 60 // 880)


def trip_hours(minutes: int) -> float:
    """Driving hours of a delivery run: there and back, rounded up to a tenth of an hour."""
    return -(-2 * minutes * 10 // 60) / 10


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def minutes_of(hhmm: str) -> int:
    hhmm = hhmm.replace(":", "")
    return int(hhmm[:2]) * 60 + int(hhmm[2:])


def price_cents(
    rates: dict[str, Any],
    km: float,
    weight_kg: float,
    volume_m3: float,
    service: str,
    extras: list[str],
    residential: bool,
    discount_percent: int,
) -> tuple[int, list[dict[str, Any]]]:
    """(total, invoice lines) of a delivery, in cents."""
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
    surcharges = (["residential"] if residential else []) + sorted(set(extras))
    for name in surcharges:
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


def dollars(amount_cents: int) -> float:
    return round(amount_cents / 100, 2)


def mf_date(day: str) -> str:
    return day.replace("-", "")


# ---------------------------------------------------------------- depots, accounts, sites


def _depots(network: dict[str, Any]) -> dict[str, Any]:
    return {
        code: {k: v for k, v in depot.items() if k != "towns"}
        for code, depot in network["depots"].items()
    }


def _business_days(first: date, last: date) -> list[date]:
    days, day = [], first
    while day <= last:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


def _phone(rng: random.Random, depot: str, used: set[str]) -> str:
    number = f"+1{AREA_CODES[depot]}555{rng.randint(100, 9999):04d}"
    while number in used:
        number = f"+1{AREA_CODES[depot]}555{rng.randint(100, 9999):04d}"
    used.add(number)
    return number


def _slug(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _accounts(rng: random.Random, depots: dict[str, Any]) -> dict[str, Any]:
    codes = sorted(depots)
    phones: set[str] = set()
    accounts: dict[str, Any] = {}
    for n, name in enumerate(ACCOUNT_NAMES):
        aid = f"K{1001 + n}"
        depot = codes[n % len(codes)]
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        domain = f"{_slug(name)[:18]}.example.com"
        accounts[aid] = {
            "name": name,
            "home_depot": depot,
            "contact": {
                "name": f"{first} {last}",
                "email": f"{first.lower()}.{last.lower()}@{domain}",
                "phone": _phone(rng, depot, phones),
            },
            "billing_email": f"ap@{domain}",
            "discount_percent": rng.choice([0, 0, 5, 5, 8, 10, 12]),
            "payment_terms": rng.choice(["net 30", "net 30", "net 15", "card on file"]),
        }
    return accounts


def _sites(rng: random.Random, network: dict[str, Any]) -> dict[str, Any]:
    sites: dict[str, Any] = {}
    phones: set[str] = set()
    names: set[str] = set()
    n = 1001
    for code, depot in network["depots"].items():
        for i in range(SITES_PER_DEPOT):
            town = depot["towns"][i % len(depot["towns"])]
            residential = rng.random() < 0.25
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            if residential:
                name = f"{first} {last} (residence)"
            else:
                name = f"{rng.choice(SITE_PREFIXES)} {rng.choice(SITE_KINDS)}"
                while name in names:
                    name = f"{rng.choice(SITE_PREFIXES)} {rng.choice(SITE_KINDS)}"
            names.add(name)
            has_mobile = rng.random() < 0.88
            sites[f"S{n}"] = {
                "name": name,
                "depot": code,
                "type": "residential" if residential else "commercial",
                "address": f"{rng.randint(100, 9899)} {rng.choice(STREETS)}",
                "city": town["name"],
                "state": town["state"],
                "zip": f"{town['zip']}{rng.randint(1, 99):02d}",
                "lat": round(town["lat"] + rng.randint(-350, 350) / 10000, 4),
                "lon": round(town["lon"] + rng.randint(-350, 350) / 10000, 4),
                "contact": f"{first} {last}",
                "mobile": _phone(rng, code, phones) if has_mobile else None,
                "email": f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@example.net",
                "dock": not residential and rng.random() < 0.5,
            }
            n += 1
    return sites


# ---------------------------------------------------------------- fleet and drivers


def _fleet(rng: random.Random, depots: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    vehicles: dict[str, Any] = {}
    drivers: dict[str, Any] = {}
    history_days = [d for d in _business_days(TODAY - timedelta(days=7), TODAY) if d < TODAY]
    vehicle_no, driver_no = 101, 201
    phones: set[str] = set()
    for i, code in enumerate(sorted(depots)):
        depot = depots[code]
        crew = 14 if i < 2 else 13
        depot_drivers = []
        for j in range(crew):
            did = f"D{driver_no}"
            driver_no += 1
            if j < len(FLEET_PER_DEPOT):
                kind = FLEET_PER_DEPOT[j]
                licences = {
                    "van": ["B"],
                    "box_truck": ["B", "C"],
                    "tractor_trailer": ["B", "C", "CE"],
                }[kind]
                if kind == "van" and rng.random() < 0.4:
                    licences = ["B", "C"]
            else:
                licences = rng.choice([["B"], ["B", "C"], ["B", "C", "CE"]])
            driven = {
                d.isoformat(): 0.0 if rng.random() < 0.2 else rng.randint(50, 105) / 10
                for d in history_days
            }
            drivers[did] = {
                "name": f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}",
                "depot": code,
                "licences": licences,
                "phone": _phone(rng, code, phones),
                "status": "active",
                "days_off": [],
                "driven_hours": driven,
                "planned_hours": {},
                "linehauls": [],
            }
            depot_drivers.append(did)
        # Two drivers of the depot have a day off in the planning horizon.
        for did in rng.sample(depot_drivers, 2):
            off = rng.choice(_business_days(TODAY + timedelta(days=1), LAST_DAY))
            drivers[did]["days_off"] = [off.isoformat()]
        for j, kind in enumerate(FLEET_PER_DEPOT):
            vid = f"V{vehicle_no}"
            vehicle_no += 1
            spec = VEHICLE_TYPES[kind]
            vehicles[vid] = {
                "depot": code,
                "type": kind,
                "model": spec["model"],
                "plate": f"{PLATE_STATES[code]} {rng.choice('BCDFGHJKLMNPRSTVWXZ')}"
                f"{rng.randint(10000, 99999)}",
                "capacity_kg": spec["capacity_kg"],
                "capacity_m3": spec["capacity_m3"],
                "licence_required": spec["licence"],
                "regular_driver_id": depot_drivers[j],
                "status": "active",
                "maintenance_until": None,
                "gps": {"lat": depot["lat"], "lon": depot["lon"], "at": f"{TODAY} 05:40"},
                "loads": {},
            }
        # One vehicle per depot is in the workshop for a few days.
        vid = f"V{vehicle_no - 10 + rng.randint(0, 9)}"
        vehicles[vid]["status"] = "maintenance"
        until = TODAY + timedelta(days=rng.choice([1, 2, 3, 6]))
        vehicles[vid]["maintenance_until"] = until.isoformat()
    return vehicles, drivers


def hours_left(driver: dict[str, Any], day: str) -> float:
    """Driving hours a driver still has on a day: the daily limit and the 7-day limit."""
    if driver["status"] != "active" or day in driver["days_off"]:
        return 0.0
    this = date.fromisoformat(day)

    def hours_on(d: date) -> float:
        key = d.isoformat()
        return float(driver["driven_hours"].get(key, 0.0) + driver["planned_hours"].get(key, 0.0))

    week = sum(round(hours_on(this - timedelta(days=i)) * 10) for i in range(7))
    daily = round(DAILY_LIMIT_H * 10) - round(hours_on(this) * 10)
    weekly = round(WEEKLY_LIMIT_H * 10) - week
    return max(0, min(daily, weekly)) / 10


def vehicle_available(vehicle: dict[str, Any], day: str) -> bool:
    if vehicle["status"] == "active":
        return True
    until = vehicle["maintenance_until"]
    return until is not None and day > until


def free_capacity(vehicle: dict[str, Any], day: str) -> tuple[int, float]:
    load = vehicle["loads"].get(day, {"kg": 0, "m3": 0.0})
    return vehicle["capacity_kg"] - load["kg"], round(vehicle["capacity_m3"] - load["m3"], 1)


# ---------------------------------------------------------------- the mainframe


def _mainframe(rng: random.Random, depots: dict[str, Any]) -> dict[str, Any]:
    """DISPATCH/390 loading-dock slots: each depot, each business day, 4 docks x 6 windows.

    BKD_KG counts all freight on the slot, including cross-dock pallets that are not
    shipments of this system, so a slot can be full with no shipment of ours on it.
    """
    slots: dict[str, Any] = {}
    for code in sorted(depots):
        for day in _business_days(TODAY, MANIFEST_UNTIL):
            closed_dock = rng.choice(list(DOCKS)) if rng.random() < 0.15 else None
            for dock, cap in DOCKS.items():
                for start in SLOT_STARTS:
                    end = f"{int(start[:2]) + 2:02d}00"
                    roll = rng.random()
                    if roll < 0.35:
                        booked = rng.randint(0, 30) * cap // 100
                    elif roll < 0.75:
                        booked = rng.randint(30, 70) * cap // 100
                    elif roll < 0.93:
                        booked = rng.randint(70, 95) * cap // 100
                    else:
                        booked = cap
                    booked -= booked % 10
                    stat = "FULL" if booked >= cap else "OPEN"
                    rmk = ""
                    if dock == closed_dock:
                        stat, booked, rmk = "CLSD", 0, "DOCK DOOR REPAIR"
                    slot_id = f"{code}/{mf_date(day.isoformat())}/{dock}/{start}"
                    slots[slot_id] = {
                        "SLOT_ID": slot_id,
                        "DEPOT": code,
                        "MFST_DT": mf_date(day.isoformat()),
                        "DOCK": dock,
                        "WIN": f"{start}-{end}",
                        "CAP_KG": cap,
                        "BKD_KG": booked,
                        "STAT": stat,
                        "SHPMTS": [],
                        "RMK": rmk,
                    }
    return {"system": "DISPATCH/390", "slots": slots}


# ---------------------------------------------------------------- shipments


def _window(rng: random.Random, service: str) -> tuple[str, str]:
    if service == "express":
        start = rng.choice([8, 10, 12, 14, 16])
        return f"{start:02d}:00", f"{start + 2:02d}:00"
    if service == "standard":
        start = rng.choice([8, 10, 12, 14])
        return f"{start:02d}:00", f"{start + 4:02d}:00"
    start = rng.choice([8, 10])
    return f"{start:02d}:00", f"{start + 8:02d}:00"


def _cargo(rng: random.Random) -> tuple[int, float, int]:
    roll = rng.random()
    if roll < 0.5:
        weight, pieces = rng.randint(8, 300), rng.randint(1, 12)
    elif roll < 0.85:
        weight, pieces = rng.randint(300, 1100), rng.randint(1, 4)
    elif roll < 0.97:
        weight, pieces = rng.randint(1200, 4800), rng.randint(3, 10)
    else:
        weight, pieces = rng.randint(5200, 14000), rng.randint(8, 22)
    density = rng.randint(160, 320)
    volume = max(0.1, round(weight / density, 1))
    return weight, volume, pieces


def pick_slot(
    mainframe: dict[str, Any], depot: str, day: str, weight: float, minutes: int, window: Any
) -> str | None:
    """The policy's slot: the earliest open slot with room whose ETA falls in the window."""
    lo, hi = minutes_of(window["from"]), minutes_of(window["to"])
    prefix = f"{depot}/{mf_date(day)}/"
    found = []
    for slot_id, slot in mainframe["slots"].items():
        if not slot_id.startswith(prefix) or slot["STAT"] != "OPEN":
            continue
        if slot["CAP_KG"] - slot["BKD_KG"] < weight:
            continue
        eta = minutes_of(slot["WIN"][:4]) + LOADING_MINUTES + minutes
        if lo <= eta <= hi:
            found.append((slot["WIN"], slot["DOCK"], slot_id))
    return min(found)[2] if found else None


def pick_vehicle(
    vehicles: dict[str, Any],
    drivers: dict[str, Any],
    depot: str,
    day: str,
    weight: float,
    volume: float,
    hours: float,
) -> str | None:
    """The policy's vehicle: the smallest that fits, whose regular driver has the hours."""
    found = []
    for vid, vehicle in vehicles.items():
        if vehicle["depot"] != depot or not vehicle_available(vehicle, day):
            continue
        free_kg, free_m3 = free_capacity(vehicle, day)
        if free_kg < weight or free_m3 < volume:
            continue
        if hours_left(drivers[vehicle["regular_driver_id"]], day) < hours:
            continue
        found.append((vehicle["capacity_kg"], int(vid[1:]), vid))
    return min(found)[2] if found else None


def _shipments(
    rng: random.Random,
    network: dict[str, Any],
    accounts: dict[str, Any],
    sites: dict[str, Any],
    vehicles: dict[str, Any],
    drivers: dict[str, Any],
    mainframe: dict[str, Any],
) -> dict[str, Any]:
    depots = network["depots"]
    days = _business_days(FIRST_DAY, LAST_DAY)
    weights = [20 if d < TODAY else 30 if d == TODAY else 30 if d.day == 2 else 17 for d in days]
    while sum(weights) < N_SHIPMENTS:
        weights[-1] += 1
    site_ids = {code: [s for s in sorted(sites) if sites[s]["depot"] == code] for code in depots}
    drafts = []
    for day, count in zip(days, weights, strict=True):
        for _ in range(count):
            aid = rng.choice(sorted(accounts))
            service = rng.choices(["economy", "standard", "express"], weights=[25, 55, 20])[0]
            window = _window(rng, service)
            drafts.append((day, window, aid, service))
    drafts = drafts[:N_SHIPMENTS]
    drafts.sort(key=lambda d: (d[0], d[1], d[2]))
    shipments: dict[str, Any] = {}
    now = minutes_of(NOW)
    for n, (day, window, aid, service) in enumerate(drafts):
        sid = f"SH{40001 + n}"
        account = accounts[aid]
        depot = account["home_depot"]
        site_id = rng.choice(site_ids[depot])
        weight, volume, pieces = _cargo(rng)
        if weight > 1100 and sites[site_id]["type"] == "residential":
            site_id = rng.choice([s for s in site_ids[depot] if sites[s]["type"] == "commercial"])
        site = sites[site_id]
        extras = []
        if weight > 300 and not site["dock"] and rng.random() < 0.4:
            extras.append("liftgate")
        if rng.random() < 0.03:
            extras.append("hazmat")
        km = road_km(depots[depot], site)
        minutes = drive_minutes(km)
        total, lines = price_cents(
            network["rates"],
            km,
            weight,
            volume,
            service,
            extras,
            site["type"] == "residential",
            account["discount_percent"],
        )
        day_s = day.isoformat()
        booked_on = min(day - timedelta(days=rng.randint(1, 9)), TODAY)
        shipment: dict[str, Any] = {
            "account_id": aid,
            "reference": f"PO-{rng.randint(100000, 999999)}",
            "origin_depot": depot,
            "consignee_site_id": site_id,
            "service_level": service,
            "pieces": pieces,
            "weight_kg": weight,
            "volume_m3": volume,
            "extras": extras,
            "delivery_window": {"date": day_s, "from": window[0], "to": window[1]},
            "status": "booked",
            "dock_slot": None,
            "vehicle_id": None,
            "driver_id": None,
            "planned_departure": None,
            "eta": None,
            "delivered_at": None,
            "invoice": {
                "number": f"INV-{700001 + n}",
                "amount": dollars(total),
                "lines": [
                    {
                        "code": x["code"],
                        "description": x["description"],
                        "amount": dollars(x["cents"]),
                    }
                    for x in lines
                ],
                "status": "open",
                "adjustments": [],
            },
            "booked_on": booked_on.isoformat(),
            "history": [{"on": booked_on.isoformat(), "event": "booked"}],
        }
        shipments[sid] = shipment
        if day < TODAY:
            _past(rng, shipment, day, window, minutes, vehicles, drivers, depot)
            continue
        if rng.random() < (0.35 if day > TODAY + timedelta(days=2) else 0.2):
            continue  # not released for dispatch yet
        win = {"from": window[0], "to": window[1]}
        slot_id = pick_slot(mainframe, depot, day_s, weight, minutes, win)
        if slot_id is None:
            continue
        start = minutes_of(mainframe["slots"][slot_id]["WIN"][:4])
        if day == TODAY and start + LOADING_MINUTES > now and start < now:
            continue  # a slot being loaded right now cannot take new freight
        hours = trip_hours(minutes)
        vid = pick_vehicle(vehicles, drivers, depot, day_s, weight, volume, hours)
        if vid is None:
            continue
        slot = mainframe["slots"][slot_id]
        slot["BKD_KG"] += weight
        slot["SHPMTS"].append(sid)
        if slot["BKD_KG"] >= slot["CAP_KG"]:
            slot["STAT"] = "FULL"
        vehicle = vehicles[vid]
        did = vehicle["regular_driver_id"]
        load = vehicle["loads"].setdefault(day_s, {"kg": 0, "m3": 0.0, "shipments": []})
        load["kg"] += weight
        load["m3"] = round(load["m3"] + volume, 1)
        load["shipments"].append(sid)
        planned = drivers[did]["planned_hours"]
        planned[day_s] = round(planned.get(day_s, 0.0) + hours, 1)
        departure = start + LOADING_MINUTES
        eta = departure + minutes
        shipment.update(
            {
                "status": "planned",
                "dock_slot": slot_id,
                "vehicle_id": vid,
                "driver_id": did,
                "planned_departure": f"{day_s} {clock(departure)}",
                "eta": f"{day_s} {clock(eta)}",
            }
        )
        shipment["history"].append({"on": min(day, TODAY).isoformat(), "event": "planned"})
        if day == TODAY and departure <= now:
            if eta <= now:
                shipment["status"] = "delivered"
                shipment["delivered_at"] = f"{day_s} {clock(eta)}"
                shipment["history"].append({"on": day_s, "event": "delivered"})
            else:
                shipment["status"] = "in_transit"
                done = (now - departure) / minutes
                vehicle["gps"] = {
                    "lat": round(
                        depots[depot]["lat"] + (site["lat"] - depots[depot]["lat"]) * done, 4
                    ),
                    "lon": round(
                        depots[depot]["lon"] + (site["lon"] - depots[depot]["lon"]) * done, 4
                    ),
                    "at": f"{day_s} {clock(now - 3)}",
                }
                shipment["history"].append({"on": day_s, "event": "departed"})
    return shipments


def _past(
    rng: random.Random,
    shipment: dict[str, Any],
    day: date,
    window: tuple[str, str],
    minutes: int,
    vehicles: dict[str, Any],
    drivers: dict[str, Any],
    depot: str,
) -> None:
    """A shipment of the last two weeks: delivered, mostly."""
    day_s = day.isoformat()
    roll = rng.random()
    if roll < 0.03:
        shipment["status"] = "cancelled"
        shipment["invoice"]["status"] = "void"
        shipment["history"].append(
            {"on": (day - timedelta(days=1)).isoformat(), "event": "cancelled"}
        )
        return
    fleet = sorted(
        v
        for v, vehicle in vehicles.items()
        if vehicle["depot"] == depot and vehicle["capacity_kg"] >= shipment["weight_kg"]
    )
    vid = rng.choice(fleet[:4])
    lo = minutes_of(window[0])
    start = max(6 * 60, -(-(lo - LOADING_MINUTES - minutes) // 120) * 120)
    departure = start + LOADING_MINUTES
    eta = departure + minutes
    dock = rng.randint(1, 4)
    shipment.update(
        {
            "status": "delivered" if roll >= 0.07 else "exception",
            "dock_slot": f"{depot}/{mf_date(day_s)}/D{dock}/{clock(start).replace(':', '')}",
            "vehicle_id": vid,
            "driver_id": vehicles[vid]["regular_driver_id"],
            "planned_departure": f"{day_s} {clock(departure)}",
            "eta": f"{day_s} {clock(eta)}",
        }
    )
    shipment["history"].append({"on": (day - timedelta(days=1)).isoformat(), "event": "planned"})
    if shipment["status"] == "delivered":
        shipment["delivered_at"] = f"{day_s} {clock(eta + rng.randint(0, 15))}"
        shipment["history"].append({"on": day_s, "event": "delivered"})
        if day < TODAY - timedelta(days=6):
            shipment["invoice"]["status"] = "paid"
    else:
        reason = rng.choice(["refused by consignee", "damaged in transit", "consignee closed"])
        shipment["exception"] = reason
        shipment["history"].append({"on": day_s, "event": f"exception: {reason}"})


LINEHAUL_TO = {"SEA": "PDX", "PDX": "SEA", "SPK": "SEA", "BOI": "SLC", "SLC": "BOI", "RNO": "SLC"}


def _linehauls(rng: random.Random, drivers: dict[str, Any], vehicles: dict[str, Any]) -> None:
    """Depot-to-depot trailer runs of the drivers who are no vehicle's regular driver.

    They come after the delivery plan and only on days the driver has no delivery run, so
    they never break the plan's hour limits; they do use up the day.
    """
    regulars = {v["regular_driver_id"] for v in vehicles.values()}
    for did, driver in drivers.items():
        if did in regulars:
            continue
        for day in _business_days(TODAY + timedelta(days=1), LAST_DAY):
            key = day.isoformat()
            if key in driver["days_off"] or key in driver["planned_hours"]:
                continue
            if rng.random() < 0.3:
                hours = rng.randint(80, 100) / 10
                driver["linehauls"].append(
                    {
                        "date": key,
                        "run": f"{driver['depot']}-{LINEHAUL_TO[driver['depot']]}",
                        "hours": hours,
                    }
                )
                driver["planned_hours"][key] = hours
