"""How far toolproof's verdict on an imported BFCL task agrees with BFCL's own multi-turn
checker, on the same trajectories: the ground truth, an agent that does nothing, and the
ground truth perturbed (a call dropped, an argument changed, a write duplicated, two calls
swapped). Each trajectory is graded by BFCL's `multi_turn_checker` and by a toolproof run of
the imported suite with a scripted agent making exactly those calls.

On some kinds toolproof is stricter than BFCL by design (`STRICTER_BY_DESIGN`): there the two
define different things, and the headline agreement leaves those kinds out."""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from toolproof.importers.bfcl.data import (
    CATEGORIES,
    Call,
    Entry,
    call_text,
    load_entries,
    read_lines,
)
from toolproof.importers.bfcl.suite import classify_calls, import_bfcl

Trajectory = list[list[Call]]
"""The calls an agent made, one list per BFCL turn."""

KINDS = ("ground-truth", "do-nothing", "drop-call", "change-arg", "duplicate-write", "swap-calls")


@dataclass(frozen=True)
class ByDesign:
    """A trajectory kind on which toolproof is stricter than the other grader by design."""

    mark: str
    """What toolproof fails there, as the table marks the kind."""
    reason: str
    """How toolproof's reason starts on each trajectory of the kind the other grader passes."""
    why: str


STRICTER_BY_DESIGN = {
    "duplicate-write": ByDesign(
        mark="a duplicate write",
        reason="writes: a duplicate write: ",
        why="BFCL compares the state and what the calls returned; toolproof fails a write "
        "done and made again, even where the second call is refused or changes nothing",
    ),
}
"""The kinds where toolproof and BFCL grade different things on purpose, with why."""


@dataclass
class Graded:
    """One trajectory of one entry, as both graders judged it."""

    entry: str
    kind: str
    toolproof: bool
    bfcl: bool
    toolproof_reason: str = ""
    bfcl_reason: str = ""

    @property
    def agrees(self) -> bool:
        return self.toolproof == self.bfcl


@dataclass
class Agreement:
    """Every graded trajectory, and the perturbations that did not apply to an entry."""

    graded: list[Graded] = field(default_factory=list)
    not_applicable: dict[str, int] = field(default_factory=dict)

    def alike(self, headline: bool = False) -> tuple[int, int]:
        """How many trajectories both graders grade alike, of how many: all of them, or for
        the headline those of the kinds both graders define alike (not `STRICTER_BY_DESIGN`)."""
        rows = [g for g in self.graded if not (headline and g.kind in STRICTER_BY_DESIGN)]
        return sum(g.agrees for g in rows), len(rows)

    def by_design(self) -> list[Graded]:
        """The disagreements a stricter-by-design kind explains: BFCL passes, and toolproof
        fails for that kind's reason."""
        return [g for g in self.graded if explained(g)]

    def unexplained(self) -> list[Graded]:
        """Every other disagreement."""
        return [g for g in self.graded if not g.agrees and not explained(g)]


def explained(graded: Graded) -> bool:
    """Whether the trajectory is a disagreement its kind's design explains."""
    design = STRICTER_BY_DESIGN.get(graded.kind)
    return (
        design is not None
        and graded.bfcl
        and not graded.toolproof
        and graded.toolproof_reason.startswith(design.reason)
    )


def perturbations(entry: Entry, writes: set[str]) -> dict[str, Trajectory]:
    """The trajectories of one entry, by kind; a perturbation with nothing to act on (no
    call with an argument, no write, no two different calls in a turn) is left out."""
    gold = entry.ground_truth
    out: dict[str, Trajectory] = {
        "ground-truth": [list(t) for t in gold],
        "do-nothing": [[] for _ in gold],
    }
    spots = [(i, j) for i, turn in enumerate(gold) for j in range(len(turn))]
    if spots:
        i, j = spots[-1]
        out["drop-call"] = _edit(gold, i, gold[i][:j] + gold[i][j + 1 :])
    for i, j in spots:
        changed = _changed(gold[i][j])
        if changed is not None:
            out["change-arg"] = _edit(gold, i, [*gold[i][:j], changed, *gold[i][j + 1 :]])
            break
    for i, j in spots:
        if gold[i][j].name in writes:
            out["duplicate-write"] = _edit(gold, i, [*gold[i][: j + 1], *gold[i][j:]])
            break
    for i, j in spots:
        turn = gold[i]
        if j + 1 < len(turn) and turn[j].text != turn[j + 1].text:
            out["swap-calls"] = _edit(gold, i, [*turn[:j], turn[j + 1], turn[j], *turn[j + 2 :]])
            break
    return out


def _edit(gold: Trajectory, index: int, turn: list[Call]) -> Trajectory:
    return [turn if i == index else list(t) for i, t in enumerate(gold)]


def _changed(call: Call) -> Call | None:
    """The call with its first argument changed: a string gets "_x" appended, a number 1
    added, a flag negated; None when it has no such argument."""
    for key, value in call.args.items():
        new: Any
        if isinstance(value, bool):
            new = not value
        elif isinstance(value, int | float):
            new = value + 1
        elif isinstance(value, str):
            new = value + "_x"
        else:
            continue
        args = {**call.args, key: new}
        return Call(call.name, args, call_text(call.name, args))
    return None


def bfcl_verdict(entry: Entry, raw: dict[str, Any], trajectory: Trajectory, tag: str) -> Graded:
    """BFCL's `multi_turn_checker` on the trajectory (each turn one step of calls). `tag`
    keeps its backend instances apart from every other trajectory's: BFCL caches them in
    module globals by model name and entry id."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    decoded = [[[c.text for c in turn]] if turn else [] for turn in trajectory]
    gold = [[c.text for c in turn] for turn in entry.ground_truth]
    result = multi_turn_checker(decoded, gold, raw, f"multi_turn_{entry.category}", tag)
    return Graded(
        entry.id, "", toolproof=False, bfcl=bool(result["valid"]), bfcl_reason=_why(result)
    )


def _why(result: dict[str, Any]) -> str:
    if result["valid"]:
        return ""
    return f"{result.get('error_type', '')}: {result.get('error_message', '')}"


def script_turns(entry: Entry, trajectory: Trajectory) -> list[dict[str, Any]]:
    """The scripted model's turns for a trajectory: per user turn, its calls in one response,
    then "Done."; the calls of a BFCL turn without a user message (miss_func's turn that adds
    the held-out function) go with the turn before it."""
    turns: list[list[Call]] = []
    for message, calls in zip(entry.turns, trajectory, strict=True):
        if message is None and turns:
            turns[-1].extend(calls)
        else:
            turns.append(list(calls))
    out: list[dict[str, Any]] = []
    for calls in turns:
        if calls:
            out.append({"tool_calls": [{"name": c.name, "arguments": c.args} for c in calls]})
        out.append({"text": "Done."})
    return out


async def toolproof_verdicts(
    suite_dir: Path, scripts: dict[str, list[dict[str, Any]]]
) -> dict[str, tuple[bool, str]]:
    """Run the suite once with a scripted agent making each task's calls: task -> (passed,
    reason)."""
    from toolproof.runner import RunRequest, run_suite
    from toolproof.store import Store
    from toolproof.suite import load_suite

    script = suite_dir / "agent-script.yaml"
    script.write_text(yaml.safe_dump({"tasks": scripts}, sort_keys=False), encoding="utf-8")
    suite = load_suite(suite_dir)
    seen: dict[str, tuple[bool, str]] = {}
    request = RunRequest(
        agent=f"scripted:{script}", trials=1, k=[1], tasks=",".join(scripts), concurrency=4
    )
    store = Store(f"sqlite:///{suite_dir / 'runs.db'}")
    await run_suite(
        suite,
        request,
        store,
        fresh=True,
        on_result=lambda r: seen.__setitem__(r.task_id, (r.outcome == "passed", r.reason)),
    )
    return seen


def sample(entries: list[Entry], count: int, category: str) -> list[Entry]:
    """`count` entries spread evenly over the category (its entries are grouped by scenario:
    the first ones alone would test a few backends). The four categories are built on the same
    scenarios, entry for entry, so each starts at another place."""
    stride = max(1, len(entries) // count)
    start = CATEGORIES.index(category) * stride // len(CATEGORIES)
    return entries[start::stride][:count]


def measure(
    category: str, count: int, progress: Callable[[str], None] = lambda _: None
) -> Agreement:
    """Both verdicts on every trajectory of `count` entries of `category` (`sample`)."""
    every = load_entries(category)
    entries = sample(every, count, category)
    raw = {r["id"]: r for r in read_lines(f"BFCL_v4_multi_turn_{category}.json")}
    writes, _ = classify_calls(every)
    agreement = Agreement()
    tags = itertools.count()
    with tempfile.TemporaryDirectory(prefix="bfcl-agreement-") as tmp:
        suite_dir = Path(tmp) / "suite"
        import_bfcl(category, suite_dir, ids=[e.id for e in entries])
        by_kind: dict[str, dict[str, tuple[Trajectory, Graded]]] = {k: {} for k in KINDS}
        for entry in entries:
            made = perturbations(entry, writes)
            for kind in KINDS:
                if kind not in made:
                    agreement.not_applicable[kind] = agreement.not_applicable.get(kind, 0) + 1
                    continue
                graded = bfcl_verdict(entry, raw[entry.id], made[kind], f"agree_{next(tags)}")
                graded.kind = kind
                by_kind[kind][entry.id] = (made[kind], graded)
        for kind, found in by_kind.items():
            if not found:
                continue
            progress(f"{category}: {kind}, {len(found)} entries")
            scripts = {e.id: script_turns(e, found[e.id][0]) for e in entries if e.id in found}
            verdicts = asyncio.run(toolproof_verdicts(suite_dir, scripts))
            for entry_id, (_, graded) in found.items():
                graded.toolproof, graded.toolproof_reason = verdicts[entry_id]
                agreement.graded.append(graded)
    return agreement
