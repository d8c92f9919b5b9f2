"""Per-trial hooks: each trial gets its own tenant of the CUSTDB service.

The service lives for the whole run and trials run at the same time, so each one works on
a private copy of the customer base: the tenant named by the trial's id, which the backend
sends with every call (`X-Tenant: "{trial_id}"` in suite.yaml).
"""

from __future__ import annotations

import httpx2

HTTP = httpx2.Client(timeout=10)
"""One client for every trial (a new one per call costs more than the call)."""


def create_tenant(services: dict[str, str], trial_id: str) -> None:
    """A fresh tenant, seeded as the suite's world is."""
    HTTP.put(f"{services['custdb']}/_tenants/{trial_id}").raise_for_status()


def drop_tenant(services: dict[str, str], trial_id: str) -> None:
    HTTP.delete(f"{services['custdb']}/_tenants/{trial_id}").raise_for_status()
