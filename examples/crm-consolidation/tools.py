"""The data steward's simulated tools: Salesforce, HubSpot and the master-data hub.

Each tool stands for a service a revenue-operations team consolidating its customer data
really calls:

- Salesforce (REST API, OAuth token that expires: `sf_refresh_token`): accounts, contacts,
  opportunities, and its own merge and delete operations
- HubSpot (CRM v3 API): companies, contacts with marketing consent, deals, contact merge
- the master-data hub: a duplicate matcher, and the golden records it keeps (`merge_contacts`
  and `rollup_account` write them). Like real hubs it works from its nightly extract of each
  source; for the in-house system that is the world's `inhouse`, which nothing here changes

The in-house support and billing API ("CUSTDB") is not simulated: it is a real HTTP service
(`custdb/app.py`), and its tools come from its API document (`custdb/openapi.yaml`).

The services do what they are told. Salesforce deletes an account with open opportunities
(and the opportunities with it), the hub builds a golden record from whichever source the
caller names for each field, and HubSpot merges any two contacts. Which record survives and
which value wins is the consolidation policy's business, and so the agent's.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from toolproof.tools import ToolError, tool
from toolproof.world import World

SF_TOKEN = "00D5g000004Xk2A!AQ8AQHn3vQk1rT7mW2cYz9LbP"
SF_API = "/services/data/v59.0/sobjects"
INDUSTRIES = [
    "Manufacturing",
    "Healthcare",
    "Retail",
    "Software",
    "Financial Services",
    "Logistics",
    "Energy",
    "Education",
    "Hospitality",
    "Construction",
]
SfMergeField = Literal["Email", "Phone", "Title"]


# ---------------------------------------------------------------- helpers


def _today(world: World) -> str:
    today: str = world["meta"]["today"]
    return today


def _e164(number: str, what: str = "phone") -> str:
    digits = re.sub(r"\D", "", number)
    if len(digits) == 10:
        digits = "1" + digits
    if len(digits) != 11 or not digits.startswith("1"):
        raise ToolError(f"{number!r} is not a valid US {what} number.", kind="invalid_phone")
    return "+" + digits


def _sf_phone(number: str) -> str:
    d = _e164(number)[2:]
    return f"({d[:3]}) {d[3:6]}-{d[6:]}"


def _email(value: str) -> str:
    email = value.strip().lower()
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", email):
        raise ToolError(f"{value!r} is not an email address.", kind="invalid_email")
    return email


def _domain(value: str) -> str:
    text = value.strip().lower()
    text = re.sub(r"^https?://", "", text).removeprefix("www.")
    return text.split("/")[0].split("@")[-1]


def _sf_record(kind: str, record_id: str, record: Any, fields: list[str]) -> dict[str, Any]:
    return {
        "attributes": {"type": kind, "url": f"{SF_API}/{kind}/{record_id}"},
        "Id": record_id,
        **{f: record.get(f) for f in fields},
    }


def _sf_get(world: World, collection: str, record_id: str, kind: str) -> tuple[str, Any]:
    key = record_id.strip()
    record = world["salesforce"][collection].get(key)
    if record is None:
        # Salesforce also takes the 18-character form of an id.
        record = world["salesforce"][collection].get(key[:15])
        key = key[:15]
    if record is None or record["IsDeleted"]:
        raise ToolError(
            f"NOT_FOUND: The requested {kind} {record_id!r} does not exist or was deleted.",
            kind="not_found",
        )
    return key, record


CONTACT_FIELDS = [
    "AccountId",
    "FirstName",
    "LastName",
    "Email",
    "Phone",
    "Title",
    "HasOptedOutOfEmail",
    "LastModifiedDate",
]
ACCOUNT_FIELDS = [
    "Name",
    "Website",
    "Phone",
    "Industry",
    "NumberOfEmployees",
    "BillingStreet",
    "BillingCity",
    "BillingState",
    "BillingPostalCode",
    "BillingCountry",
    "Billing_Email__c",
    "CreatedDate",
    "LastModifiedDate",
]


def _hs_get(world: World, collection: str, record_id: str | int, kind: str) -> tuple[str, Any]:
    key = str(record_id).strip()
    record = world["hubspot"][collection].get(key)
    if record is None or record["archived"]:
        raise ToolError(
            f"resource not found: {kind} {record_id!r} does not exist or is archived",
            kind="not_found",
        )
    return key, record


def _hs_view(record_id: str, record: Any) -> dict[str, Any]:
    view = {"id": record_id, "properties": dict(record["properties"]), "archived": False}
    if "company_id" in record:
        view["associations"] = {"companies": [record["company_id"]]}
    return view


def _ih_customer(world: World, customer_id: str | int) -> tuple[str, Any]:
    key = re.sub(r"\D", "", str(customer_id))
    customer = world["inhouse"]["customers"].get(key)
    if customer is None:
        raise ToolError(f"ERR 404: cust {customer_id!r} not found", kind="not_found")
    return key, customer


def _ih_contact(world: World, contact_id: str) -> tuple[str, Any, Any]:
    key = str(contact_id).strip().upper().removeprefix("IH:")
    cust_key = key.split("-")[0]
    customer = world["inhouse"]["customers"].get(cust_key)
    for contact in (customer or {}).get("ctcts", []):
        if contact["cid"] == key:
            return key, contact, customer
    raise ToolError(f"ERR 404: ctct {contact_id!r} not found", kind="not_found")


def _ref(text: str) -> tuple[str, str]:
    """("sf" | "hs" | "ih", id) from "sf:003…", "hubspot:5123…", "ih:88012-2" or a bare id."""
    raw = text.strip()
    match = re.fullmatch(
        r"(?i)\s*(sf|salesforce|hs|hubspot|ih|inhouse|in-house)\s*[:/ ]\s*(\S+)", raw
    )
    if match:
        system = match.group(1).lower()
        system = {"salesforce": "sf", "hubspot": "hs", "inhouse": "ih", "in-house": "ih"}.get(
            system, system
        )
        return system, match.group(2)
    if re.fullmatch(r"00[136][0-9A-Za-z]{12,15}", raw):
        return "sf", raw[:15]
    if re.fullmatch(r"\d+-\d+", raw) or re.fullmatch(r"88\d{3}", raw):
        return "ih", raw
    if raw.isdigit():
        return "hs", raw
    raise ToolError(
        f"Cannot tell which system {text!r} is from; write it as sf:<id>, hs:<id> or ih:<id>.",
        kind="invalid_reference",
    )


def _contact_record(world: World, ref: str) -> tuple[str, dict[str, Any]]:
    """A source contact in common terms: (canonical ref, fields)."""
    system, key = _ref(ref)
    if system == "sf":
        cid, c = _sf_get(world, "contacts", key, "Contact")
        return f"sf:{cid}", {
            "first": c["FirstName"],
            "last": c["LastName"],
            "email": c["Email"],
            "phone": c["Phone"],
            "title": c["Title"],
            "opt_in": not c["HasOptedOutOfEmail"],
            "account": f"sf:{c['AccountId']}",
        }
    if system == "hs":
        hid, h = _hs_get(world, "contacts", key, "contact")
        if h["merged_into"]:
            raise ToolError(f"contact {hid} was merged into {h['merged_into']}", kind="not_found")
        p = h["properties"]
        return f"hs:{hid}", {
            "first": p["firstname"],
            "last": p["lastname"],
            "email": p["email"],
            "phone": p["phone"] or None,
            "title": p["jobtitle"] or None,
            "opt_in": p["marketing_consent"] == "opted_in",
            "account": f"hs:{h['company_id']}",
        }
    if system == "ih":
        cid, ct, _ = _ih_contact(world, key)
        last, _, first = ct["nm"].partition(", ")
        return f"ih:{cid}", {
            "first": first.title(),
            "last": last.title(),
            "email": ct["e_mail"],
            "phone": ct["tel"] or None,
            "title": None,
            "opt_in": ct["mktg"] == "Y",
            "account": f"ih:{cid.split('-')[0]}",
        }
    raise ToolError(f"Unknown system {system!r}.", kind="invalid_reference")


def _account_record(world: World, system: str, key: str) -> tuple[str, dict[str, Any]]:
    """A source account in common terms: (canonical ref, fields)."""
    if system == "sf":
        aid, a = _sf_get(world, "accounts", key, "Account")
        billing = None
        if a.get("BillingStreet"):
            billing = {
                "street": a["BillingStreet"],
                "city": a.get("BillingCity"),
                "state": a.get("BillingState"),
                "zip": a.get("BillingPostalCode"),
                "email": a.get("Billing_Email__c"),
            }
        return f"sf:{aid}", {
            "name": a["Name"],
            "domain": _domain(a["Website"]),
            "phone": a.get("Phone"),
            "industry": a.get("Industry"),
            "employees": a.get("NumberOfEmployees"),
            "billing": billing,
        }
    if system == "hs":
        hid, h = _hs_get(world, "companies", key, "company")
        p = h["properties"]
        return f"hs:{hid}", {
            "name": p["name"],
            "domain": p["domain"],
            "phone": p["phone"],
            "industry": p["industry"],
            "employees": p["numberofemployees"],
            "billing": None,
        }
    cust_id, c = _ih_customer(world, key)
    industry = next((i for i in INDUSTRIES if i.upper() == c["ind"]), c["ind"].title())
    return f"ih:{cust_id}", {
        "name": c["cust_nm"],
        "domain": c["dom"],
        "phone": c["tel"],
        "industry": industry,
        "employees": int(c["emp_cnt"]),
        "billing": {
            "street": c["bill_to"]["addr1"].title(),
            "city": c["bill_to"]["city"].title(),
            "state": c["bill_to"]["st"],
            "zip": c["bill_to"]["zip"],
            "email": c["ap_email"],
        },
    }


def _pick(refs: list[str], chosen: str | None, what: str) -> str | None:
    if chosen is None:
        return None
    system, key = _ref(chosen)
    if system == "sf":
        key = key.strip()[:15]
    elif system == "ih":
        key = key.strip().upper()
    for ref in refs:
        if ref == f"{system}:{key}":
            return ref
    raise ToolError(
        f"{what} must be one of the records being merged ({', '.join(refs)}), not {chosen!r}.",
        kind="invalid_request",
    )


def _golden_id(prefix: str, refs: list[str]) -> str:
    """A golden id from the source records it unites: the same records, the same id,
    whatever order the golden records are built in."""
    return f"{prefix}{hashlib.sha1('|'.join(sorted(refs)).encode()).hexdigest()[:8].upper()}"


# ---------------------------------------------------------------- Salesforce


@tool
def sf_refresh_token() -> Any:
    """Get a new Salesforce OAuth access token (they expire after two hours).

    When a Salesforce call fails with token_expired, call this and retry the call; the
    gateway attaches the new token by itself.
    """
    return {
        "access_token": SF_TOKEN,
        "token_type": "Bearer",
        "instance_url": "https://halyard.my.salesforce.com",
        "issued_at": "1764687600000",
    }


@tool
def sf_search_accounts(world: World, name: str | None = None, domain: str | None = None) -> Any:
    """Search Salesforce accounts by name (contains, any case) or website domain.

    Args:
        name: Part of the account name, e.g. "Brightfield".
        domain: The company's web domain, e.g. "brightfieldenergy.example".
    """
    if not name and not domain:
        raise ToolError("MALFORMED_QUERY: give a name or a domain.", kind="invalid_request")
    wanted = name.casefold() if name else None
    dom = _domain(domain) if domain else None
    records = [
        _sf_record(
            "Account",
            aid,
            a,
            ["Name", "Website", "Phone", "BillingCity", "CreatedDate", "LastModifiedDate"],
        )
        for aid, a in world["salesforce"]["accounts"].items()
        if not a["IsDeleted"]
        and (wanted is None or wanted in a["Name"].casefold())
        and (dom is None or _domain(a["Website"]) == dom)
    ]
    records.sort(key=lambda r: (r["Name"], r["Id"]))
    return {"totalSize": len(records), "done": True, "records": records}


@tool
def sf_get_account(world: World, account_id: str) -> Any:
    """Get a Salesforce account with its billing fields, contacts and opportunities.

    Args:
        account_id: The 15- or 18-character account id, e.g. "0015g00000AbC12".
    """
    aid, account = _sf_get(world, "accounts", account_id, "Account")
    sf = world["salesforce"]
    contacts = [
        _sf_record("Contact", cid, c, ["FirstName", "LastName", "Email", "Title"])
        for cid, c in sf["contacts"].items()
        if c["AccountId"] == aid and not c["IsDeleted"]
    ]
    opportunities = [
        _sf_record("Opportunity", oid, o, ["Name", "StageName", "Amount", "CloseDate", "IsClosed"])
        for oid, o in sf["opportunities"].items()
        if o["AccountId"] == aid and not o["IsDeleted"]
    ]
    return {
        **_sf_record("Account", aid, account, ACCOUNT_FIELDS),
        "Contacts": {"totalSize": len(contacts), "records": contacts},
        "Opportunities": {"totalSize": len(opportunities), "records": opportunities},
    }


@tool
def sf_search_contacts(
    world: World,
    email: str | None = None,
    name: str | None = None,
    account_id: str | None = None,
) -> Any:
    """Search Salesforce contacts by email, name (contains, any case) or account.

    Args:
        email: The email address, any case.
        name: Part of "FirstName LastName", e.g. "Dana Whit".
        account_id: Only contacts of this account, e.g. "0015g00000AbC12".
    """
    if not email and not name and not account_id:
        raise ToolError(
            "MALFORMED_QUERY: give an email, a name or an account_id.", kind="invalid_request"
        )
    wanted = name.casefold() if name else None
    mail = email.strip().casefold() if email else None
    account = account_id.strip()[:15] if account_id else None
    records = [
        _sf_record("Contact", cid, c, CONTACT_FIELDS)
        for cid, c in world["salesforce"]["contacts"].items()
        if not c["IsDeleted"]
        and (mail is None or (c["Email"] or "").casefold() == mail)
        and (wanted is None or wanted in f"{c['FirstName']} {c['LastName']}".casefold())
        and (account is None or c["AccountId"] == account)
    ]
    records.sort(key=lambda r: (r["LastName"], r["FirstName"], r["Id"]))
    return {"totalSize": len(records), "done": True, "records": records}


@tool(write=True)
def sf_update_contact(
    world: World,
    contact_id: str,
    email: str | None = None,
    phone: str | None = None,
    job_title: str | None = None,
) -> Any:
    """Update fields of a Salesforce contact.

    Args:
        contact_id: The contact id, e.g. "0035g00000XyZ98".
        email: New email address (Email).
        phone: New phone number, any format (Phone).
        job_title: New job title (Title).
    """
    cid, contact = _sf_get(world, "contacts", contact_id, "Contact")
    if email is None and phone is None and job_title is None:
        raise ToolError("Nothing to update.", kind="invalid_request")
    if email is not None:
        contact["Email"] = _email(email)
    if phone is not None:
        contact["Phone"] = _sf_phone(phone)
    if job_title is not None:
        contact["Title"] = " ".join(job_title.split())
    contact["LastModifiedDate"] = world["meta"]["now_sf"]
    return {"id": cid, "success": True, **_sf_record("Contact", cid, contact, CONTACT_FIELDS)}


@tool(write=True)
def sf_merge_contacts(
    world: World,
    master_id: str,
    duplicate_id: str,
    fields_from_duplicate: list[SfMergeField] | None = None,
) -> Any:
    """Merge two Salesforce contacts: the master survives, the duplicate is deleted.

    The master keeps its own field values except those listed in fields_from_duplicate,
    which take the duplicate's value. Activities and opportunity roles move to the master.
    A merge is not an edit: the master's LastModifiedDate stays, unless it takes fields
    from a more recently modified duplicate; then it carries the duplicate's date.

    Args:
        master_id: The contact that survives.
        duplicate_id: The contact merged into it and deleted.
        fields_from_duplicate: Fields to take from the duplicate: Email, Phone, Title.
    """
    mid, master = _sf_get(world, "contacts", master_id, "Contact")
    did, duplicate = _sf_get(world, "contacts", duplicate_id, "Contact")
    if mid == did:
        raise ToolError("INVALID_OPERATION: cannot merge a record with itself.", kind="conflict")
    taken = sorted(set(fields_from_duplicate or []))
    for field in taken:
        if not duplicate[field]:
            raise ToolError(f"The duplicate has no {field} to keep.", kind="invalid_request")
        master[field] = duplicate[field]
    if taken:
        master["LastModifiedDate"] = max(master["LastModifiedDate"], duplicate["LastModifiedDate"])
    duplicate["IsDeleted"] = True
    duplicate["MasterRecordId"] = mid
    return {
        "id": mid,
        "success": True,
        "mergedRecordIds": [did],
        **_sf_record("Contact", mid, master, CONTACT_FIELDS),
    }


@tool(write=True)
def sf_merge_accounts(world: World, master_id: str, duplicate_id: str) -> Any:
    """Merge two Salesforce accounts: the master survives with its own field values (and
    its LastModifiedDate); the duplicate's contacts and opportunities move to it and the
    duplicate is deleted.

    Args:
        master_id: The account that survives.
        duplicate_id: The account merged into it and deleted.
    """
    mid, _ = _sf_get(world, "accounts", master_id, "Account")
    did, duplicate = _sf_get(world, "accounts", duplicate_id, "Account")
    if mid == did:
        raise ToolError("INVALID_OPERATION: cannot merge a record with itself.", kind="conflict")
    sf = world["salesforce"]
    moved = {"contacts": 0, "opportunities": 0}
    for collection in ("contacts", "opportunities"):
        for record in sf[collection].values():
            if record["AccountId"] == did and not record["IsDeleted"]:
                record["AccountId"] = mid
                moved[collection] += 1
    duplicate["IsDeleted"] = True
    duplicate["MasterRecordId"] = mid
    return {
        "id": mid,
        "success": True,
        "mergedRecordIds": [did],
        "moved": moved,
    }


@tool(write=True)
def sf_delete_account(world: World, account_id: str) -> Any:
    """Delete a Salesforce account. Its contacts and opportunities are deleted with it
    (they go to the recycle bin).

    Args:
        account_id: The account id, e.g. "0015g00000AbC12".
    """
    aid, account = _sf_get(world, "accounts", account_id, "Account")
    sf = world["salesforce"]
    deleted = {"contacts": 0, "opportunities": 0}
    for collection in ("contacts", "opportunities"):
        for record in sf[collection].values():
            if record["AccountId"] == aid and not record["IsDeleted"]:
                record["IsDeleted"] = True
                deleted[collection] += 1
    account["IsDeleted"] = True
    return {"id": aid, "success": True, "cascade_deleted": deleted}


# ---------------------------------------------------------------- HubSpot


@tool
def hs_search_companies(world: World, name: str | None = None, domain: str | None = None) -> Any:
    """Search HubSpot companies by name (contains, any case) or domain.

    Args:
        name: Part of the company name.
        domain: The company's web domain, e.g. "brightfieldenergy.example".
    """
    if not name and not domain:
        raise ToolError("give a name or a domain filter", kind="invalid_request")
    wanted = name.casefold() if name else None
    dom = _domain(domain) if domain else None
    results = [
        _hs_view(hid, c)
        for hid, c in world["hubspot"]["companies"].items()
        if not c["archived"]
        and (wanted is None or wanted in c["properties"]["name"].casefold())
        and (dom is None or c["properties"]["domain"] == dom)
    ]
    results.sort(key=lambda r: (r["properties"]["name"], r["id"]))
    return {"total": len(results), "results": results}


@tool
def hs_get_company(world: World, company_id: str) -> Any:
    """Get a HubSpot company with its associated contacts and deals.

    Args:
        company_id: The company id, e.g. "5123409876".
    """
    hid, company = _hs_get(world, "companies", company_id, "company")
    hs = world["hubspot"]
    contacts = [
        {"id": cid, **{k: c["properties"][k] for k in ("firstname", "lastname", "email")}}
        for cid, c in hs["contacts"].items()
        if c["company_id"] == hid and not c["archived"]
    ]
    deals = [{"id": did, **d} for did, d in hs["deals"].items() if d["company_id"] == hid]
    view = _hs_view(hid, company)
    view["associations"] = {"contacts": contacts, "deals": deals}
    return view


@tool
def hs_search_contacts(
    world: World,
    email: str | None = None,
    name: str | None = None,
    company_id: str | None = None,
) -> Any:
    """Search HubSpot contacts by email, name (contains, any case) or associated company.

    Properties include marketing_consent (opted_in, unsubscribed, not_set) and the date it
    was last set, consent_updated.

    Args:
        email: The email address, any case.
        name: Part of "firstname lastname".
        company_id: Only contacts associated with this company.
    """
    if not email and not name and not company_id:
        raise ToolError("give an email, name or company_id filter", kind="invalid_request")
    wanted = name.casefold() if name else None
    mail = email.strip().casefold() if email else None
    results = [
        _hs_view(cid, c)
        for cid, c in world["hubspot"]["contacts"].items()
        if not c["archived"]
        and (mail is None or c["properties"]["email"].casefold() == mail)
        and (
            wanted is None
            or wanted in f"{c['properties']['firstname']} {c['properties']['lastname']}".casefold()
        )
        and (company_id is None or c["company_id"] == str(company_id).strip())
    ]
    results.sort(key=lambda r: (r["properties"]["lastname"], r["properties"]["firstname"], r["id"]))
    return {"total": len(results), "results": results}


@tool(write=True)
def hs_merge_contacts(world: World, primary_id: str, secondary_id: str) -> Any:
    """Merge two HubSpot contacts. The primary keeps its property values (and its
    lastmodifieddate) and gains the secondary's email as an additional email; the
    secondary is archived.

    Args:
        primary_id: The contact that remains.
        secondary_id: The contact merged into it.
    """
    pid, primary = _hs_get(world, "contacts", primary_id, "contact")
    sid, secondary = _hs_get(world, "contacts", secondary_id, "contact")
    if pid == sid:
        raise ToolError("cannot merge a contact into itself", kind="conflict")
    extra = secondary["properties"]["email"]
    emails = [e for e in primary["properties"].get("hs_additional_emails", "").split(";") if e]
    if extra and extra != primary["properties"]["email"] and extra not in emails:
        emails.append(extra)
    primary["properties"]["hs_additional_emails"] = ";".join(emails)
    secondary["archived"] = True
    secondary["merged_into"] = pid
    return {"id": pid, "mergedObjectIds": [sid], **_hs_view(pid, primary)}


# ---------------------------------------------------------------- master-data hub


@tool
def find_duplicates(world: World, domain: str | None = None, name: str | None = None) -> Any:
    """The hub's duplicate matcher: every account record of a company in Salesforce, HubSpot
    and the in-house system, and its contact records grouped by likely person.

    Contacts are grouped by last name within the company, so a group can hold two different
    people who share a last name. Each record shows its reference (sf:, hs:, ih:), values as
    its system stores them, and its system's last-modified timestamp, unconverted.

    Args:
        domain: The company's web domain, e.g. "brightfieldenergy.example".
        name: Part of the company name, if the domain is not known.
    """
    if not domain and not name:
        raise ToolError("Give a domain or a company name.", kind="invalid_request")
    dom = _domain(domain) if domain else None
    if dom is None:
        wanted = (name or "").casefold()
        found = [
            _domain(a["Website"])
            for a in world["salesforce"]["accounts"].values()
            if not a["IsDeleted"] and wanted in a["Name"].casefold()
        ] + [
            c["properties"]["domain"]
            for c in world["hubspot"]["companies"].values()
            if not c["archived"] and wanted in c["properties"]["name"].casefold()
        ]
        if len(set(found)) != 1:
            raise ToolError(
                f"{len(set(found))} companies match {name!r}; give the domain.",
                kind="ambiguous" if found else "not_found",
            )
        dom = found[0]
    sf, hs = world["salesforce"], world["hubspot"]
    accounts: list[dict[str, Any]] = []
    sf_ids = [
        aid
        for aid, a in sf["accounts"].items()
        if not a["IsDeleted"] and _domain(a["Website"]) == dom
    ]
    for aid in sf_ids:
        a = sf["accounts"][aid]
        accounts.append(
            {"ref": f"sf:{aid}", "name": a["Name"], "modified": a["LastModifiedDate"],
             "created": a["CreatedDate"]}
        )  # fmt: skip
    hs_ids = [
        hid
        for hid, c in hs["companies"].items()
        if not c["archived"] and c["properties"]["domain"] == dom
    ]
    for hid in hs_ids:
        p = hs["companies"][hid]["properties"]
        accounts.append(
            {"ref": f"hs:{hid}", "name": p["name"], "modified": p["hs_lastmodifieddate"]}
        )
    ih_ids = [k for k, c in world["inhouse"]["customers"].items() if c["dom"] == dom]
    for cust_id in ih_ids:
        c = world["inhouse"]["customers"][cust_id]
        accounts.append({"ref": f"ih:{cust_id}", "name": c["cust_nm"], "modified": c["upd"]})
    if not accounts:
        raise ToolError(f"No records for domain {dom!r}.", kind="not_found")
    records: list[dict[str, Any]] = []
    for cid, c in sf["contacts"].items():
        if c["AccountId"] in sf_ids and not c["IsDeleted"]:
            records.append(
                {"ref": f"sf:{cid}", "first": c["FirstName"], "last": c["LastName"],
                 "email": c["Email"], "phone": c["Phone"], "title": c["Title"],
                 "modified": c["LastModifiedDate"]}
            )  # fmt: skip
    for cid, c in hs["contacts"].items():
        if c["company_id"] in hs_ids and not c["archived"]:
            p = c["properties"]
            records.append(
                {"ref": f"hs:{cid}", "first": p["firstname"], "last": p["lastname"],
                 "email": p["email"], "phone": p["phone"] or None,
                 "title": p["jobtitle"] or None, "modified": p["lastmodifieddate"]}
            )  # fmt: skip
    for cust_id in ih_ids:
        for ct in world["inhouse"]["customers"][cust_id]["ctcts"]:
            last, _, first = ct["nm"].partition(", ")
            records.append(
                {"ref": f"ih:{ct['cid']}", "first": first, "last": last, "email": ct["e_mail"],
                 "phone": ct["tel"] or None, "title": None, "modified": ct["upd"]}
            )  # fmt: skip
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        key = re.sub(r"[^a-z]", "", record["last"].casefold())
        groups.setdefault(key, []).append(record)
    xref = world["mdm"]["xref"]
    out = []
    for key in sorted(groups):
        members = groups[key]
        for m in members:
            m["golden_id"] = xref.get(m["ref"])
        emails = [(m["email"] or "").casefold() for m in members]
        phones = [re.sub(r"\D", "", m["phone"] or "")[-10:] for m in members]
        reasons = ["same last name"]
        if len(set(e for e in emails if e)) < len([e for e in emails if e]):
            reasons.append("shared email")
        if len(set(p for p in phones if p)) < len([p for p in phones if p]):
            reasons.append("shared phone")
        out.append({"match": reasons, "records": members})
    return {"domain": dom, "accounts": accounts, "contact_groups": out}


@tool(write=True)
def merge_contacts(
    world: World,
    records: list[str],
    survivor: str,
    email_from: str,
    phone_from: str | None = None,
    title_from: str | None = None,
    consent_from: str | None = None,
) -> Any:
    """Build a golden contact in the hub from source records of one person.

    The golden record takes its name from the survivor and each field from the record
    named for it. It joins its company's golden account, now or when that is rolled up.
    Marketing consent: opted in only if consent_from names a record whose system says so
    (HubSpot marketing_consent, Salesforce HasOptedOutOfEmail, in-house mktg); not opted
    in when consent_from is omitted.

    Args:
        records: References of every source record of the person, e.g.
            ["sf:0035g00000XyZ98", "hs:51234987", "ih:88012-2"].
        survivor: The record whose identity survives (its name is kept).
        email_from: The record whose email wins.
        phone_from: The record whose phone wins; omit if none has one.
        title_from: The record whose job title wins; omit if none has one.
        consent_from: The record whose marketing consent is used.
    """
    if not records:
        raise ToolError("Give the records to merge.", kind="invalid_request")
    sources = dict(_contact_record(world, r) for r in records)
    refs = sorted(sources)
    xref = world["mdm"]["xref"]
    for ref in refs:
        if ref in xref:
            raise ToolError(f"{ref} is already part of golden record {xref[ref]}.", kind="conflict")
    chosen = {
        "survivor": _pick(refs, survivor, "survivor"),
        "email": _pick(refs, email_from, "email_from"),
        "phone": _pick(refs, phone_from, "phone_from"),
        "title": _pick(refs, title_from, "title_from"),
        "consent": _pick(refs, consent_from, "consent_from"),
    }
    for field in ("email", "phone", "title"):
        ref = chosen[field]
        if ref is not None and not sources[ref][field]:
            raise ToolError(f"{ref} has no {field}.", kind="invalid_request")
    head = sources[chosen["survivor"] or refs[0]]
    golden_contacts = world["mdm"]["golden_contacts"]
    gid = _golden_id("GC-", refs)
    golden = {
        "first_name": head["first"],
        "last_name": head["last"],
        "email": _email(sources[chosen["email"]]["email"]),
        "phone": _e164(sources[chosen["phone"]]["phone"]) if chosen["phone"] else None,
        "title": sources[chosen["title"]]["title"] if chosen["title"] else None,
        "marketing_opt_in": bool(chosen["consent"] and sources[chosen["consent"]]["opt_in"]),
        "survivor": chosen["survivor"],
        "sources": {k: chosen[k] for k in ("email", "phone", "title", "consent")},
        "records": refs,
        "accounts": sorted({sources[r]["account"] for r in refs}),
        "merged_on": _today(world),
    }
    golden_contacts[gid] = golden
    for ref in refs:
        xref[ref] = gid
    for account in golden["accounts"]:
        rolled = world["mdm"]["golden_accounts"].get(xref.get(account, ""))
        if rolled is not None and gid not in rolled["contacts"]:
            rolled["contacts"] = sorted([*rolled["contacts"], gid])
    return {"golden_id": gid, **golden}


@tool(write=True)
def rollup_account(
    world: World,
    sf_account_id: str,
    billing_from: str,
    phone_from: str,
    industry_from: str,
    employees_from: str,
    hs_company_id: str | None = None,
    inhouse_id: str | None = None,
) -> Any:
    """Write the golden account of a company: its Salesforce account, HubSpot company and
    in-house customer rolled into one, with the golden contacts already built for them.

    The name and domain come from Salesforce. Billing address and billing email come from
    the record named in billing_from; phone, industry and employee count from theirs.

    Args:
        sf_account_id: The Salesforce account, e.g. "0015g00000AbC12".
        billing_from: Reference of the record whose billing fields win, e.g. "sf:0015g…".
        phone_from: Reference of the record whose phone wins.
        industry_from: Reference of the record whose industry wins.
        employees_from: Reference of the record whose employee count wins.
        hs_company_id: The HubSpot company, if any.
        inhouse_id: The in-house customer id, if any.
    """
    sources = dict([_account_record(world, "sf", sf_account_id)])
    if hs_company_id:
        sources.update([_account_record(world, "hs", hs_company_id)])
    if inhouse_id:
        sources.update([_account_record(world, "ih", str(inhouse_id))])
    refs = sorted(sources)
    xref = world["mdm"]["xref"]
    for ref in refs:
        if ref in xref:
            raise ToolError(f"{ref} is already part of golden record {xref[ref]}.", kind="conflict")
    sf_ref = next(r for r in refs if r.startswith("sf:"))
    billing = _pick(refs, billing_from, "billing_from")
    if billing is None or sources[billing]["billing"] is None:
        raise ToolError(f"{billing_from} has no billing fields.", kind="invalid_request")
    picks: dict[str, str] = {}
    for field, chosen in (
        ("phone", phone_from),
        ("industry", industry_from),
        ("employees", employees_from),
    ):
        picks[field] = _pick(refs, chosen, f"{field}_from") or sf_ref
    golden_contacts = world["mdm"]["golden_contacts"]
    contacts = sorted(
        gid for gid, g in golden_contacts.items() if any(a in refs for a in g["accounts"])
    )
    golden_accounts = world["mdm"]["golden_accounts"]
    gid = _golden_id("GA-", refs)
    golden = {
        "name": sources[sf_ref]["name"],
        "domain": sources[sf_ref]["domain"],
        "billing": dict(sources[billing]["billing"]),
        "phone": _e164(sources[picks["phone"]]["phone"]),
        "industry": sources[picks["industry"]]["industry"],
        "employees": sources[picks["employees"]]["employees"],
        "sources": {"billing": billing, **picks},
        "records": refs,
        "contacts": contacts,
        "rolled_up_on": _today(world),
    }
    golden_accounts[gid] = golden
    for ref in refs:
        xref[ref] = gid
    return {"golden_id": gid, **golden}
