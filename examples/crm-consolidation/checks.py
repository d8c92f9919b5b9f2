"""Final-state checks of CUSTDB, asked of the trial's tenant of the live service.

The world hash covers Salesforce, HubSpot and the hub; these cover the in-house system. A
check passes when it returns; a failed `assert` fails it with its message.
"""

from __future__ import annotations

from typing import Any

import httpx2

HTTP = httpx2.Client(timeout=10)


def custdb(services: dict[str, str], trial_id: str, path: str) -> Any:
    response = HTTP.get(f"{services['custdb']}{path}", headers={"X-Tenant": trial_id})
    response.raise_for_status()
    return response.json()


def custdb_changed(services: dict[str, str], trial_id: str, records: list[str]) -> None:
    """Exactly these records (contact ids, or customer ids) differ from the seed."""
    changed = custdb(services, trial_id, f"/_tenants/{trial_id}/changes")["changed"]
    assert changed == sorted(records), (
        f"CUSTDB records changed: {', '.join(changed) or 'none'}; "
        f"expected {', '.join(sorted(records)) or 'none'}"
    )


def custdb_unchanged(services: dict[str, str], trial_id: str) -> None:
    """No CUSTDB record was changed: the task asked for none."""
    custdb_changed(services, trial_id, [])


def custdb_contact(
    services: dict[str, str], trial_id: str, cid: str, e_mail: str, tel: str
) -> None:
    """The contact has this e-mail and phone, as CUSTDB stores them."""
    customer = custdb(services, trial_id, f"/cust/{cid.split('-')[0]}")
    contact = next((c for c in customer["ctcts"] if c["cid"] == cid), None)
    assert contact is not None, f"no contact {cid}"
    found = {"e_mail": contact["e_mail"], "tel": contact["tel"]}
    assert found == {"e_mail": e_mail, "tel": tel}, f"{cid} has {found}"
