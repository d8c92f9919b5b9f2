"""The lending desk's tools: find a member by email, list their loans, renew one."""

from __future__ import annotations

import datetime
from typing import Any

from toolproof.tools import ToolError, tool
from toolproof.world import World

RENEWAL = datetime.timedelta(weeks=3)


@tool
def find_member(world: World, email: str) -> dict[str, Any]:
    """Find a library member by the email address on their card.

    Args:
        email: The member's email address, e.g. name@example.org.
    """
    wanted = email.strip().lower()
    for member_id, member in world["members"].items():
        if member["email"] == wanted:
            return {"member_id": member_id, **member}
    raise ToolError(f"no member with email {email}", kind="not_found")


@tool
def list_loans(world: World, member_id: str) -> list[dict[str, Any]]:
    """List a member's loans: title, due date, whether it was renewed or is reserved by
    another member, and days overdue.

    Args:
        member_id: The member id, e.g. M-1000.
    """
    if member_id not in world["members"]:
        raise ToolError(f"no member {member_id}", kind="not_found")
    return [
        {"loan_id": loan_id, **loan}
        for loan_id, loan in world["loans"].items()
        if loan["member"] == member_id
    ]


@tool(write=True)
def renew_loan(world: World, loan_id: str) -> dict[str, Any]:
    """Renew a loan by three weeks from its due date (once per loan, and not when another
    member has reserved the book).

    Args:
        loan_id: The loan id, e.g. L-100.
    """
    loan = world["loans"].get(loan_id)
    if loan is None:
        raise ToolError(f"no loan {loan_id}", kind="not_found")
    if loan["reserved"]:
        raise ToolError(f"{loan['title']} is reserved by another member", kind="invalid_state")
    if loan["renewed"]:
        raise ToolError(f"{loan['title']} was renewed once already", kind="invalid_state")
    due = datetime.date.fromisoformat(loan["due"]) + RENEWAL
    loan["due"] = due.isoformat()
    loan["renewed"] = True
    return {"loan_id": loan_id, "title": loan["title"], "due": loan["due"]}
