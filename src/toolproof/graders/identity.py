"""Who the user is: whether a call identified them, on values they gave."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from toolproof.graders.base import Evidence
from toolproof.transcript import ToolCallEvent


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


@lru_cache(maxsize=256)
def _heard(said: str) -> tuple[str, str]:
    """What the user said as call arguments are compared with it (squashed, and its digits),
    remembered: each call of a trial is compared with the whole conversation so far, and every
    trial of a task has the same one. A few hundred conversations: the cache stays small
    however long a run goes."""
    return _squash(said), re.sub(r"\D", "", said)


def given_by_user(arguments: dict[str, Any] | None, said: str) -> bool:
    """One of the call's argument values is something the user said: compared ignoring
    case, spaces and punctuation, a phone number by its last ten digits."""
    heard, heard_digits = _heard(said)
    for value in (arguments or {}).values():
        if not isinstance(value, str | int) or isinstance(value, bool):
            continue
        text = _squash(str(value))
        digits = re.sub(r"\D", "", str(value))
        if len(digits) >= 10 and digits[-10:] in heard_digits:
            return True
        if len(text) >= 3 and text in heard:
            return True
    return False


def identifies(
    event: ToolCallEvent, tools: list[str], user_given: bool, said: list[str], evidence: Evidence
) -> bool:
    """A successful call of an identifying tool, on a value the user gave when required, that
    names the caller's own account where the task says whose that is: finding someone else's
    account with an email the user typed identifies no one."""
    if not (
        event.canonical_name in tools
        and not event.is_error
        and (not user_given or given_by_user(event.canonical_arguments, " ".join(said)))
    ):
        return False
    ownership = evidence.ownership
    if ownership is None or not ownership.caller:
        return True
    return bool(owners_in(event.result, ownership.field) & ownership.caller)


def owners_in(result: Any, field: str) -> set[Any]:
    """The owners named in a result (its records' owner fields)."""
    if isinstance(result, dict):
        named = result.get(field)
        found = {str(named)} if isinstance(named, str | int) else set()
        return found | {o for item in result.values() for o in owners_in(item, field)}
    if isinstance(result, list):
        return {o for item in result for o in owners_in(item, field)}
    return set()
