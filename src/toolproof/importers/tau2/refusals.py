"""tau2's refusal tasks, graded by code.

A tau2 task whose gold actions write nothing and which asks nothing to be said passes an agent
that does nothing: its only check is an nl assertion a judge reads ("Agent should refuse to
proceed with the cancellation"). Most are refusals: the user asks for a change (a
cancellation, a refund, a cabin change) the policy does not allow. toolproof grades such a task
as a refusal (docs/suite-format.md, Refusals): every write tool is forbidden but one the gold
path tries and the system refuses (tau2's database check fails any write that changes the
database), the refusal declines the writes the user's
words ask for, after the decisive reads (the gold actions' reads, or, where the gold reads
nothing, the lookups of the records the user's words name), with a value those reads showed
as its reason. The nl assertions stay in the task's notes. A task whose user asks for no
change, or names no record a read can look up, stays ungradable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolproof.graders.refusal import asks_for_change, requested
from toolproof.importers.tau2.state import invoke
from toolproof.meaning.actions import vocabulary
from toolproof.spec.user import UserSpec
from toolproof.tools import ToolError
from toolproof.world import World

_NAMED = re.compile(r"(?<![\w@.#-])#?(?:[A-Za-z0-9][\w-]*\d[\w-]*|[A-Z0-9]{5,}(?![\w-]))")
"""An identifier in the user's words: a word with a digit in it ("raj_sanchez_7340",
"#W2378156"), or five or more capitals and digits ("EHGLP3")."""


def as_refusal(
    data: dict[str, Any],
    world: World,
    domain: str,
    kinds: Mapping[str, str],
    schemas: Mapping[str, Mapping[str, Any]],
    nl: list[str],
) -> tuple[dict[str, Any], str | None]:
    """The task (`data`, as the import writes it) as a refusal toolproof's graders decide,
    and None; or the task unchanged and why no code check can decide it."""
    writes = [name for name in schemas if kinds.get(name) == "write"]
    reads = [name for name in schemas if kinds.get(name) == "read"]
    said = {name: str(s.get("description", "")) for name, s in schemas.items()}
    user = UserSpec.model_validate(data["user"])
    asked = requested(user, writes, vocabulary(writes, reads, said))
    if not asked and not asks_for_change(user):
        return data, (
            "its gold actions write nothing and its user asks for no change a tool makes: "
            "tau2 passes an agent that does nothing"
        )
    expect = dict(data["expect"])
    gold = list(expect.get("actions") or [])
    if not any(a["tool"] in reads for a in gold):
        gold = lookups(user_text(user), world, domain, reads, schemas)
        if not gold:
            return data, (
                "its gold actions read nothing and its user names no record a read finds: no "
                "read can show why the answer is no"
            )
    expect["actions"] = gold
    allowed = {a["tool"] for a in expect.get("allow_writes") or []}  # tau2's gold tries them
    expect["forbidden_calls"] = [{"tool": name} for name in writes if name not in allowed]
    notes = [f"tau2's nl assertion (a judge reads it): {a}" for a in nl]
    return {**data, "expect": expect, **({"notes": notes} if notes else {})}, None


def user_text(user: UserSpec) -> str:
    return "\n".join([user.opening, user.instructions or ""])


def lookups(
    text: str,
    world: World,
    domain: str,
    reads: list[str],
    schemas: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The reads of the records the user's words name: each identifier they say, given to
    each read tool that takes one required argument, where the lookup finds it."""
    found: list[dict[str, Any]] = []
    named = list(dict.fromkeys(m.group(0) for m in _NAMED.finditer(text)))
    for tool in reads:
        parameters = schemas[tool].get("parameters", {})
        required = list(parameters.get("required") or [])
        if len(required) != 1:
            continue
        for value in named:
            try:
                invoke(world.fork(), domain, tool, {required[0]: value})
            except (ToolError, TypeError, ValueError):
                continue
            found.append({"tool": tool, "args": {required[0]: value}})
    return found
