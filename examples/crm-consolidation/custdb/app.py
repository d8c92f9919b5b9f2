"""CUSTDB, the in-house support and billing API, as a local HTTP service.

The legacy system the suite's in-house tools call: upper-case values, terse field names
(`cust_nm`, `ctcts`, `nm` as "LAST, FIRST", `e_mail`, `upd`), loosely typed parameters, dates
in four formats, and errors as one line of text (`ERR 404: cust '88999' not found`), the way
its old front end wrote them. Its only documentation is `openapi.yaml` next to this file,
written by hand and incomplete.

Every call names a tenant (header `X-Tenant`): a private copy of the customer base, made
from the same seeded generator as the suite's world (`world.py`), so trials that run at the
same time never see each other's writes. The `/_tenants` endpoints, which the document
leaves out, create, compare and drop tenants; the suite's hooks and checks call them.

Run it from the suite folder: `python -m uvicorn custdb.app:app --port 8000`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import yaml
from fastapi import FastAPI, Header, Request
from fastapi.responses import PlainTextResponse, Response
from world import TODAY, build  # the suite's world.py: the service runs in the suite folder

SUITE = Path(__file__).resolve().parents[1]
SEARCH_FIELDS = ("any", "name", "dom", "domain", "email", "e_mail", "id")
DEFAULT_LIMIT = 10

app = FastAPI(title="CUSTDB", openapi_url=None, docs_url=None, redoc_url=None)


def seed() -> str:
    """The customer base as the suite's world holds it at the start, as JSON."""
    reference = yaml.safe_load((SUITE / "data" / "reference.yaml").read_text(encoding="utf-8"))
    return json.dumps(build({"reference": reference})["inhouse"]["customers"])


SEED = seed()
TENANTS: dict[str, dict[str, Any]] = {}


class Failure(Exception):
    """An answer in CUSTDB's own error style: a status and one line of text."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


@app.exception_handler(Failure)
async def failure(request: Request, exc: Failure) -> Response:
    return PlainTextResponse(f"ERR {exc.status}: {exc.text}", status_code=exc.status)


def customers(tenant: str | None) -> dict[str, Any]:
    if not tenant:
        raise Failure(400, "X-Tenant required")
    found = TENANTS.get(tenant)
    if found is None:
        raise Failure(404, f"tenant {tenant!r} not found")
    return found


Tenant = Annotated[str | None, Header(alias="X-Tenant")]


# ---------------------------------------------------------------- the documented API


@app.get("/ping")
async def ping() -> dict[str, int]:
    return {"ok": 1}


@app.get("/cust/search")
async def search(
    x_tenant: Tenant = None, q: str = "", by: str | None = None, limit: str | None = None
) -> dict[str, Any]:
    """Customers whose name, domain or contacts match `q`; `n` counts them all, `rows` holds
    the first `limit` (10 unless told otherwise)."""
    base = customers(x_tenant)
    text = q.strip().casefold()
    if not text:
        raise Failure(400, "q required")
    field = (by or "any").strip().lower()
    if field not in SEARCH_FIELDS:
        raise Failure(400, f"bad by={by}")
    try:
        cap = int(limit) if limit is not None else DEFAULT_LIMIT
    except ValueError:
        raise Failure(400, f"bad limit={limit}") from None
    rows = []
    for cust_id, c in base.items():
        hits = [
            ct["cid"]
            for ct in c["ctcts"]
            if field in ("any", "email", "e_mail")
            and (
                text in ct["e_mail"].casefold() or (field == "any" and text in ct["nm"].casefold())
            )
        ]
        if (
            (field in ("any", "name") and text in c["cust_nm"].casefold())
            or (field in ("any", "dom", "domain") and text in c["dom"])
            or (field == "id" and text == cust_id)
            or hits
        ):
            rows.append(
                {
                    "cust_id": int(cust_id),
                    "cust_nm": c["cust_nm"],
                    "dom": c["dom"],
                    "tel": c["tel"],
                    "upd": c["upd"],
                    "hits": hits,
                }
            )
    return {"n": len(rows), "rows": rows[:cap]}


@app.get("/cust/{cust_id}")
async def get_customer(cust_id: str, x_tenant: Tenant = None) -> dict[str, Any]:
    """One customer with its contacts; any non-digits in the id are ignored."""
    base = customers(x_tenant)
    key = re.sub(r"\D", "", cust_id)
    if key not in base:
        raise Failure(404, f"cust {cust_id!r} not found")
    return {"cust_id": int(key), **base[key]}


@app.post("/ctct/{cid}")
async def update_contact(cid: str, request: Request, x_tenant: Tenant = None) -> dict[str, Any]:
    """Change a contact's `e_mail` and/or `tel`; other fields of the body are ignored."""
    base = customers(x_tenant)
    key = cid.strip().upper().removeprefix("IH:")
    contact = next(
        (ct for ct in base.get(key.split("-")[0], {}).get("ctcts", []) if ct["cid"] == key),
        None,
    )
    if contact is None:
        raise Failure(404, f"ctct {cid!r} not found")
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise Failure(400, "body must be a JSON object")
    e_mail, tel = body.get("e_mail"), body.get("tel")
    if e_mail is None and tel is None:
        raise Failure(400, "nothing to update")
    if e_mail is not None:
        contact["e_mail"] = email(str(e_mail))
    if tel is not None:
        contact["tel"] = phone(str(tel))
    contact["upd"] = TODAY.strftime("%m/%d/%Y")
    return {"ok": 1, "cid": key, **contact}


def email(value: str) -> str:
    text = value.strip().lower()
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", text):
        raise Failure(422, f"{value!r} is not an email address")
    return text


def phone(value: str) -> str:
    """Ten digits, no formatting: how CUSTDB stores a US number."""
    digits = re.sub(r"\D", "", value)
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    if len(digits) != 10:
        raise Failure(422, f"{value!r} is not a valid US phone number")
    return digits


# ---------------------------------------------------------------- tenants (not documented)


@app.put("/_tenants/{tenant}", status_code=201)
async def create_tenant(tenant: str) -> dict[str, Any]:
    """A fresh copy of the seeded customer base (replacing one of the same name)."""
    TENANTS[tenant] = json.loads(SEED)
    return {"tenant": tenant, "customers": len(TENANTS[tenant])}


@app.get("/_tenants/{tenant}/changes")
async def changes(tenant: str) -> dict[str, list[str]]:
    """The records that differ from the seed: contact ids, or a customer id when a field of
    the customer itself changed."""
    base = customers(tenant)
    seeded: dict[str, Any] = json.loads(SEED)
    changed = []
    for cust_id, customer in base.items():
        before = seeded.get(cust_id)
        if before is None or {**customer, "ctcts": []} != {**before, "ctcts": []}:
            changed.append(cust_id)
            continue
        old = {ct["cid"]: ct for ct in before["ctcts"]}
        changed += [ct["cid"] for ct in customer["ctcts"] if old.get(ct["cid"]) != ct]
        changed += sorted(set(old) - {ct["cid"] for ct in customer["ctcts"]})
    changed += sorted(set(seeded) - set(base))
    return {"changed": sorted(changed)}


@app.delete("/_tenants/{tenant}", status_code=204)
async def drop_tenant(tenant: str) -> Response:
    TENANTS.pop(tenant, None)
    return Response(status_code=204)
