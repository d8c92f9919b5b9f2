"""The CRM world: one customer base as three systems see it, and an empty master-data hub.

`build(data)` generates 150 customer companies and their people, then writes each into the
systems that know them, the way years of separate tools leave them:

- Salesforce (sales): accounts, contacts, opportunities; legal names, billing fields;
  some people and some accounts entered twice
- HubSpot (marketing): companies, contacts with marketing consent, deals; some people twice
- the in-house support and billing API: customers with contacts, upper-case names, terse
  field names, and dates in whatever format the form of the day used. The world keeps
  them as the hub's extract; the live system is the CUSTDB service (`custdb/app.py`),
  whose tenants are seeded from this same function
- the master-data hub (`mdm`): golden records, empty at the start

Each system holds a version of each record: current, or one from before the person changed
email, phone or title. Record timestamps say which is newer, so the survivorship rules of
the policy always have one right answer. Everything comes from one seeded generator.
"""

from __future__ import annotations

import random
import string
from datetime import date, timedelta
from typing import Any

SEED = 20261202
TODAY = date(2026, 12, 2)
N_COMPANIES = 150
OLD = (date(2024, 2, 1), date(2025, 6, 30))
CURRENT = (date(2025, 7, 1), date(2026, 11, 25))

FIRST_NAMES = [
    "Dana", "Priya", "Marcus", "Elena", "Tomás", "Grace", "Hiroshi", "Amara", "Lukas", "Sofia",
    "Kwame", "Ingrid", "Rafael", "Mei", "Owen", "Leila", "Nikolai", "Fatima", "Jonathan",
    "Katherine", "William", "Robert", "Elizabeth", "Michael", "Aisha", "Diego", "Hannah",
    "Tariq", "Yuki", "Camila", "Samuel", "Noor", "Patrick", "Valentina", "Ethan", "Zara",
]  # fmt: skip
LAST_NAMES = [
    "Whitaker", "Raman", "Okafor", "Lindgren", "Alvarez", "Kowalski", "Tanaka", "Mensah",
    "Becker", "Rossi", "Nguyen", "Haddad", "Sullivan", "Moreno", "Fischer", "Osei", "Petrova",
    "Chen", "McKenzie", "O'Brien", "Dubois", "Kaur", "Larsen", "Romero", "Abara", "Novak",
    "Castillo", "Jansen", "Farouk", "Delgado",
]  # fmt: skip
NICKNAMES = {
    "Jonathan": "Jon",
    "Katherine": "Kate",
    "William": "Bill",
    "Robert": "Bob",
    "Elizabeth": "Liz",
    "Michael": "Mike",
}
PERSONAL_DOMAINS = ["mailbox.example", "inbox.example", "post.example"]
STREETS = [
    "Commerce St", "Industrial Pkwy", "Market St", "Harbor Blvd", "Innovation Dr", "Main St",
    "Lakeview Ave", "Technology Way", "Elm St", "Canal St", "Park Ave", "Riverside Dr",
]  # fmt: skip
PRODUCTS = ["Platform Renewal", "Analytics Add-on", "Expansion 2027", "Pilot", "Support Upgrade"]
OPEN_STAGES = ["Prospecting", "Qualification", "Proposal", "Negotiation"]
HS_OPEN_STAGES = ["appointmentscheduled", "qualifiedtobuy", "presentationscheduled"]
IH_DATE_FORMATS = ["%Y-%m-%d", "%m/%d/%Y", "%d-%b-%Y", "%Y%m%d"]
BASE62 = string.digits + string.ascii_letters


def build(data: dict[str, Any]) -> dict[str, Any]:
    """The three systems and the hub, generated from the reference data."""
    rng = random.Random(SEED)
    ref = data["reference"]
    ids = _Ids(rng)
    companies = _companies(rng, ref)
    people = _people(rng, ref, companies)
    salesforce = _salesforce(rng, ids, companies, people)
    hubspot = _hubspot(rng, ids, companies, people)
    inhouse = _inhouse(rng, ids, companies, people, salesforce)
    return {
        "salesforce": salesforce,
        "hubspot": hubspot,
        "inhouse": inhouse,
        "mdm": {"golden_contacts": {}, "golden_accounts": {}, "xref": {}},
        "meta": {
            "company": "Halyard Analytics",
            "today": TODAY.isoformat(),
            "now_sf": f"{TODAY.isoformat()}T15:00:00.000+0000",
        },
    }


# ---------------------------------------------------------------- formats


def sf_time(day: date, rng: random.Random) -> str:
    return f"{day.isoformat()}T{rng.randint(7, 19):02d}:{rng.randint(0, 59):02d}:00.000+0000"


def hs_time(day: date, rng: random.Random) -> str:
    return f"{day.isoformat()}T{rng.randint(7, 19):02d}:{rng.randint(0, 59):02d}:00.000Z"


def ih_date(day: date, rng: random.Random) -> str:
    return day.strftime(rng.choice(IH_DATE_FORMATS)).upper()


def sf_phone(e164: str) -> str:
    d = e164[2:]
    return f"({d[:3]}) {d[3:6]}-{d[6:]}"


def hs_phone(e164: str, rng: random.Random) -> str:
    d = e164[2:]
    return rng.choice([f"{d[:3]}.{d[3:6]}.{d[6:]}", f"+1 {d[:3]} {d[3:6]} {d[6:]}", e164])


def ih_phone(e164: str, rng: random.Random) -> str:
    d = e164[2:]
    return rng.choice([d, f"{d[:3]}-{d[3:6]}-{d[6:]}"])


def _day(rng: random.Random, span: tuple[date, date]) -> date:
    return span[0] + timedelta(days=rng.randint(0, (span[1] - span[0]).days))


class _Ids:
    """Unique record ids in each system's style."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()
        self.ih_customer = 88000

    def sf(self, prefix: str) -> str:
        while True:
            key = prefix + "5g00000" + "".join(self.rng.choice(BASE62) for _ in range(5))
            if key not in self.used:
                self.used.add(key)
                return key

    def hs(self, digits: int) -> str:
        while True:
            key = str(self.rng.randint(10 ** (digits - 1), 10**digits - 1))
            if key not in self.used:
                self.used.add(key)
                return key


# ---------------------------------------------------------------- the truth


def _phone(rng: random.Random, area: str, used: set[str]) -> str:
    number = f"+1{area}555{rng.randint(100, 9999):04d}"
    while number in used:
        number = f"+1{area}555{rng.randint(100, 9999):04d}"
    used.add(number)
    return number


def _companies(rng: random.Random, ref: dict[str, Any]) -> list[dict[str, Any]]:
    words = ref["company_words"]
    names: set[str] = set()
    phones: set[str] = set()
    companies = []
    while len(companies) < N_COMPANIES:
        first, second = rng.choice(words["first"]), rng.choice(words["second"])
        kind = rng.choice(words["kind"])
        short = f"{first}{second} {kind}"
        if short in names:
            continue
        names.add(short)
        region = rng.choice(ref["regions"])
        industry = rng.choice(ref["industries"])
        employees = rng.choice([12, 25, 40, 60, 85, 120, 200, 350, 500, 800, 1500, 4000])
        address = {
            "street": f"{rng.randint(10, 9899)} {rng.choice(STREETS)}",
            "city": region["city"],
            "state": region["state"],
            "zip": f"{region['zip']}{rng.randint(1, 99):02d}",
        }
        old_address = {
            **address,
            "street": f"{rng.randint(10, 9899)} {rng.choice(STREETS)}",
            "zip": f"{region['zip']}{rng.randint(1, 99):02d}",
        }
        phone = _phone(rng, region["area"], phones)
        companies.append(
            {
                "short": short,
                "legal": f"{short} {rng.choice(words['suffix'])}",
                "domain": f"{first}{second}{kind}".lower() + ".example",
                "region": region,
                "current": {
                    "phone": phone,
                    "industry": industry,
                    "employees": employees,
                    "address": address,
                },
                "old": {
                    "phone": _phone(rng, region["area"], phones) if rng.random() < 0.3 else phone,
                    "industry": rng.choice(ref["industries"]) if rng.random() < 0.15 else industry,
                    "employees": max(5, int(employees * rng.choice([0.6, 0.75, 0.9]))),
                    "address": old_address if rng.random() < 0.3 else address,
                },
            }
        )
    return companies


def _people(
    rng: random.Random, ref: dict[str, Any], companies: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    phones: set[str] = set()
    people = []
    for c, company in enumerate(companies):
        taken: set[tuple[str, str]] = set()
        for _ in range(rng.choice([2, 3, 3, 4, 4, 5, 6])):
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            while (first, last) in taken:
                first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            taken.add((first, last))
            local = f"{first}.{last}".lower().replace("'", "").replace("á", "a")
            track = rng.choice(ref["titles"])
            level = rng.randint(0, len(track) - 2)
            area = company["region"]["area"]
            current_phone = _phone(rng, area, phones)
            people.append(
                {
                    "company": c,
                    "first": first,
                    "last": last,
                    "current": {
                        "email": f"{local}@{company['domain']}",
                        "phone": current_phone,
                        "title": track[level + 1],
                    },
                    "old": {
                        "email": rng.choice(
                            [
                                f"{first[0].lower()}{local.split('.')[1]}@{company['domain']}",
                                f"{local}@{rng.choice(PERSONAL_DOMAINS)}",
                            ]
                        ),
                        "phone": _phone(rng, area, phones) if rng.random() < 0.5 else current_phone,
                        "title": track[level],
                    },
                    "consent": rng.choices(
                        ["opted_in", "unsubscribed", "not_set"], weights=[50, 25, 25]
                    )[0],
                }
            )
    return people


def _copies(rng: random.Random, chances: dict[str, float]) -> dict[str, tuple[str, date]]:
    """Which systems hold a record and which version, each with its own day."""
    held: dict[str, tuple[str, date]] = {}
    days: set[date] = set()
    for system, current_chance in chances.items():
        version = "current" if rng.random() < current_chance else "old"
        day = _day(rng, CURRENT if version == "current" else OLD)
        while day in days:
            day = _day(rng, CURRENT if version == "current" else OLD)
        days.add(day)
        held[system] = (version, day)
    return held


# ---------------------------------------------------------------- Salesforce


def _salesforce(
    rng: random.Random, ids: _Ids, companies: list[dict[str, Any]], people: list[dict[str, Any]]
) -> dict[str, Any]:
    accounts: dict[str, Any] = {}
    contacts: dict[str, Any] = {}
    opportunities: dict[str, Any] = {}
    primary: dict[int, str] = {}
    duplicate: dict[int, str] = {}
    for c, company in enumerate(companies):
        if rng.random() < 0.05:
            continue
        version, day = _copies(rng, {"sf": 0.8})["sf"]
        values = company[version]
        created = day - timedelta(days=rng.randint(200, 900))
        aid = ids.sf("001")
        primary[c] = aid
        company["sf"] = (version, day)
        accounts[aid] = _sf_account(rng, company, company["legal"], values, created, day)
        for _ in range(rng.choice([0, 1, 1, 2, 3, 4])):
            oid = ids.sf("006")
            opportunities[oid] = _opportunity(rng, aid, company, day)
        if rng.random() < 0.09:
            # Someone created the company a second time, under its short name.
            dup_day = created + timedelta(days=rng.randint(30, (TODAY - created).days - 5))
            dup = ids.sf("001")
            duplicate[c] = dup
            accounts[dup] = _sf_account(
                rng, company, company["short"], company["current"], dup_day, dup_day
            )
            accounts[dup]["BillingStreet"] = None
            accounts[dup]["Billing_Email__c"] = None
            for _ in range(rng.choice([0, 1, 1, 2])):
                oid = ids.sf("006")
                opportunities[oid] = _opportunity(rng, dup, company, dup_day)
    for person in people:
        c = person["company"]
        if c not in primary or rng.random() < 0.15:
            continue
        version, day = _copies(rng, {"sf": 0.75})["sf"]
        person["sf"] = (version, day)
        cid = ids.sf("003")
        contacts[cid] = _sf_contact(rng, person, primary[c], version, day)
        if rng.random() < 0.1 or (c in duplicate and rng.random() < 0.5):
            # Entered again later by someone who did not search first: the older version.
            other = "old" if version == "current" else "current"
            other_day = _day(rng, CURRENT if other == "current" else OLD)
            while other_day == day:
                other_day = _day(rng, CURRENT if other == "current" else OLD)
            dup_id = ids.sf("003")
            contacts[dup_id] = _sf_contact(
                rng, person, duplicate.get(c, primary[c]), other, other_day
            )
    return {"accounts": accounts, "contacts": contacts, "opportunities": opportunities}


def _sf_account(
    rng: random.Random,
    company: dict[str, Any],
    name: str,
    values: dict[str, Any],
    created: date,
    modified: date,
) -> dict[str, Any]:
    address = values["address"]
    return {
        "Name": name,
        "Website": f"https://www.{company['domain']}",
        "Phone": sf_phone(values["phone"]),
        "Industry": values["industry"],
        "NumberOfEmployees": values["employees"],
        "BillingStreet": address["street"],
        "BillingCity": address["city"],
        "BillingState": address["state"],
        "BillingPostalCode": address["zip"],
        "BillingCountry": "US",
        "Billing_Email__c": f"ap@{company['domain']}",
        "CreatedDate": sf_time(created, rng),
        "LastModifiedDate": sf_time(modified, rng),
        "IsDeleted": False,
        "MasterRecordId": None,
    }


def _opportunity(
    rng: random.Random, account_id: str, company: dict[str, Any], day: date
) -> dict[str, Any]:
    closed = rng.random() < 0.6
    stage = rng.choice(["Closed Won", "Closed Won", "Closed Lost"]) if closed else None
    close = day + timedelta(days=rng.randint(-120, 30)) if closed else None
    return {
        "AccountId": account_id,
        "Name": f"{company['short']} - {rng.choice(PRODUCTS)}",
        "StageName": stage or rng.choice(OPEN_STAGES),
        "Amount": float(rng.randint(8, 240) * 500),
        "CloseDate": (close or TODAY + timedelta(days=rng.randint(10, 150))).isoformat(),
        "IsClosed": closed,
        "IsDeleted": False,
    }


def _sf_contact(
    rng: random.Random, person: dict[str, Any], account_id: str, version: str, day: date
) -> dict[str, Any]:
    values = person[version]
    opted_out = person["consent"] == "unsubscribed" and rng.random() < 0.5
    return {
        "AccountId": account_id,
        "FirstName": person["first"],
        "LastName": person["last"],
        "Email": values["email"],
        "Phone": sf_phone(values["phone"]) if rng.random() < 0.9 else None,
        "Title": values["title"],
        "HasOptedOutOfEmail": opted_out,
        "LastModifiedDate": sf_time(day, rng),
        "IsDeleted": False,
        "MasterRecordId": None,
    }


# ---------------------------------------------------------------- HubSpot


def _hubspot(
    rng: random.Random, ids: _Ids, companies: list[dict[str, Any]], people: list[dict[str, Any]]
) -> dict[str, Any]:
    hs_companies: dict[str, Any] = {}
    hs_contacts: dict[str, Any] = {}
    deals: dict[str, Any] = {}
    known: dict[int, str] = {}
    for c, company in enumerate(companies):
        if rng.random() < 0.1:
            continue
        version, day = _copies(rng, {"hs": 0.6})["hs"]
        while "sf" in company and day == company["sf"][1]:
            day = _day(rng, CURRENT if version == "current" else OLD)
        company["hs"] = (version, day)
        values = company[version]
        hid = ids.hs(10)
        known[c] = hid
        hs_companies[hid] = {
            "properties": {
                "name": company["short"],
                "domain": company["domain"],
                "phone": hs_phone(values["phone"], rng),
                "industry": values["industry"],
                "numberofemployees": values["employees"],
                "city": values["address"]["city"],
                "state": values["address"]["state"],
                "lifecyclestage": rng.choice(["customer", "customer", "opportunity"]),
                "hs_lastmodifieddate": hs_time(day, rng),
            },
            "archived": False,
        }
        for _ in range(rng.choice([0, 1, 1, 2])):
            did = ids.hs(10)
            deals[did] = {
                "company_id": hid,
                "dealname": f"{company['short']} - {rng.choice(PRODUCTS)}",
                "dealstage": rng.choice(["closedwon", "closedlost", *HS_OPEN_STAGES]),
                "amount": str(rng.randint(8, 240) * 500),
            }
    for person in people:
        c = person["company"]
        if c not in known or rng.random() < 0.25:
            continue
        version, day = _copies(rng, {"hs": 0.6})["hs"]
        while "sf" in person and day == person["sf"][1]:
            day = _day(rng, CURRENT if version == "current" else OLD)
        person["hs"] = (version, day)
        hs_contacts[ids.hs(8)] = _hs_contact(rng, person, known[c], version, day, nickname=True)
        if rng.random() < 0.05:
            other = "old" if version == "current" else "current"
            other_day = _day(rng, CURRENT if other == "current" else OLD)
            while other_day in (day, person.get("sf", (None, None))[1]):
                other_day = _day(rng, CURRENT if other == "current" else OLD)
            hs_contacts[ids.hs(8)] = _hs_contact(rng, person, known[c], other, other_day)
    return {"companies": hs_companies, "contacts": hs_contacts, "deals": deals}


def _hs_contact(
    rng: random.Random,
    person: dict[str, Any],
    company_id: str,
    version: str,
    day: date,
    nickname: bool = False,
) -> dict[str, Any]:
    values = person[version]
    first = person["first"]
    if nickname and first in NICKNAMES and rng.random() < 0.5:
        first = NICKNAMES[first]
    consent = person["consent"]
    consent_day = day - timedelta(days=rng.randint(0, 60))
    return {
        "properties": {
            "firstname": first,
            "lastname": person["last"],
            "email": values["email"],
            "phone": hs_phone(values["phone"], rng) if rng.random() < 0.75 else "",
            "jobtitle": values["title"] if rng.random() < 0.85 else "",
            "marketing_consent": consent,
            "consent_updated": "" if consent == "not_set" else consent_day.isoformat(),
            "lastmodifieddate": hs_time(day, rng),
        },
        "company_id": company_id,
        "archived": False,
        "merged_into": None,
    }


# ---------------------------------------------------------------- in-house


def _inhouse(
    rng: random.Random,
    ids: _Ids,
    companies: list[dict[str, Any]],
    people: list[dict[str, Any]],
    salesforce: dict[str, Any],
) -> dict[str, Any]:
    sf_ids = {}
    for aid, account in salesforce["accounts"].items():
        if account["BillingStreet"] is not None:
            sf_ids[account["Website"]] = aid
    customers: dict[str, Any] = {}
    by_company: dict[int, str] = {}
    for c, company in enumerate(companies):
        if rng.random() < 0.4:
            continue
        version, day = _copies(rng, {"ih": 0.4})["ih"]
        taken = {company.get(s, (None, None))[1] for s in ("sf", "hs")}
        while day in taken:
            day = _day(rng, CURRENT if version == "current" else OLD)
        values = company[version]
        ids.ih_customer += 1
        cust_id = str(ids.ih_customer)
        by_company[c] = cust_id
        link = sf_ids.get(f"https://www.{company['domain']}")
        roll = rng.random()
        customers[cust_id] = {
            "cust_nm": company["legal"].upper().replace(".", "").replace(",", ""),
            "dom": company["domain"],
            "tel": ih_phone(values["phone"], rng),
            "ind": values["industry"].upper(),
            "emp_cnt": str(values["employees"]),
            "bill_to": {
                "addr1": values["address"]["street"].upper(),
                "city": values["address"]["city"].upper(),
                "st": values["address"]["state"],
                "zip": values["address"]["zip"],
            },
            "ap_email": f"billing@{company['domain']}",
            "sf_acct": (link if roll < 0.7 else link[:12] if roll < 0.8 else "") if link else "",
            "upd": ih_date(day, rng),
            "ctcts": [],
        }
    for person in people:
        c = person["company"]
        if c not in by_company or rng.random() < 0.55:
            continue
        version, day = _copies(rng, {"ih": 0.35})["ih"]
        taken = {person.get(s, (None, None))[1] for s in ("sf", "hs")}
        while day in taken:
            day = _day(rng, CURRENT if version == "current" else OLD)
        values = person[version]
        customer = customers[by_company[c]]
        customer["ctcts"].append(
            {
                "cid": f"{by_company[c]}-{len(customer['ctcts']) + 1}",
                "nm": f"{person['last']}, {person['first']}".upper(),
                "e_mail": values["email"].upper() if rng.random() < 0.3 else values["email"],
                "tel": ih_phone(values["phone"], rng) if rng.random() < 0.8 else "",
                "role": rng.choice(["BILLING", "TECH", "ADMIN", "TECH"]),
                "mktg": rng.choice(["Y", "N", ""]),
                "upd": ih_date(day, rng),
            }
        )
    return {"customers": customers}
