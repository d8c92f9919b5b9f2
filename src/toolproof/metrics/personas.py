"""Personas: pass rates as each persona plays the user, and recovery from confusion.

Pure. A trial's `conversation` statistics (`conversation_stats`) are derived from its
transcript when it is graded and stored with its conditions; the summary (`personas_summary`)
reads them from the rows. The task is the unit: pass rates are means over tasks, intervals
bootstrap over tasks. See docs/metrics.md, "Personas and long conversations".
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolproof.metrics.compute import Measured, derives
from toolproof.metrics.passk import TaskTrials, pass_hat_k
from toolproof.metrics.stats import (
    CONFIDENCE,
    bootstrap_means,
    percentile_interval,
    resample_indices,
)
from toolproof.spec.metrics import PASS_AT, PASS_HAT
from toolproof.spec.variants import VariantKey

if TYPE_CHECKING:
    from toolproof.metrics.sections import PassRates
    from toolproof.metrics.summary import ModelSummary
    from toolproof.transcript import ToolCallEvent, Transcript

GoldCall = tuple[str, Mapping[str, Any]]
"""A call the task's gold makes: the tool and the arguments it must get."""


def conversation_stats(transcript: Transcript, gold: Sequence[GoldCall]) -> dict[str, Any] | None:
    """What a persona or checkpoint trial contributes to these metrics, small enough to
    store: its persona, its user turns, the stretch it was given, and for a confusing
    persona the confusing turn and the turns the agent took to recover (None: never did).
    None for a trial whose user left no notes (a plain trial)."""
    notes = transcript.notes()
    if not notes:
        return None
    out: dict[str, Any] = {"user_turns": len(transcript.messages("user"))}
    for note in notes:
        if note.kind == "persona":
            out["persona"] = note.data.get("name")
        elif note.kind == "stretch":
            out["stretch"] = {"target": note.data["target"], "planned": note.data["planned"]}
        elif note.kind == "confusing_turn" and note.turn is not None:
            out["confusing_turn"] = note.turn
            out["recovery_turns"] = recovery_turns(transcript, note.turn, gold)
    return out


def recovery_turns(transcript: Transcript, confusing: int, gold: Sequence[GoldCall]) -> int | None:
    """Turns from the confusing user message to the agent's first correct next action: 1
    when the agent's reply to that very message holds one. A correct next action is a tool
    call that matches a gold call not matched by an earlier call (the same tool, every gold
    argument equal), or a question to the user (asking is the right answer to a confusing
    message). None when the trial has none after the confusing message."""
    # a trial's events are read as it is graded; a summary of stored rows never needs them
    from toolproof.transcript import MessageEvent, ToolCallEvent

    matched = [False] * len(gold)
    turn = -1
    for event in transcript.events:
        if isinstance(event, MessageEvent) and event.role == "user":
            turn += 1
            continue
        if isinstance(event, ToolCallEvent) and event.by == "agent":
            hit = _match(event, gold, matched)
            if hit is not None:
                matched[hit] = True
                if turn >= confusing:
                    return turn - confusing + 1
        elif isinstance(event, MessageEvent) and turn >= confusing and "?" in event.content:
            return turn - confusing + 1  # a question, as conversation.asks_question reads it
    return None


def _match(call: ToolCallEvent, gold: Sequence[GoldCall], matched: Sequence[bool]) -> int | None:
    args = call.canonical_arguments or {}
    for i, (tool, wanted) in enumerate(gold):
        if matched[i] or tool != call.canonical_name:
            continue
        if all(args.get(name) == value for name, value in wanted.items()):
            return i
    return None


# ---------------------------------------------------------------- the summary's section


Outcomes = Callable[[Sequence[Mapping[str, Any]]], list[TaskTrials]]
"""Per-task outcomes of some rows under the run's infra-error policy (the summary's)."""


def pass_rates(tasks: Sequence[TaskTrials], ks: Sequence[int], seed: int) -> dict[str, Any]:
    """pass@1 and pass^k (for each k every task has trials enough for) as means over tasks,
    with bootstrap intervals over tasks (null with fewer than two tasks)."""
    tasks = [t for t in tasks if t.n]
    usable = [k for k in ks if tasks and min(t.n for t in tasks) >= k]
    table = [[t.c / t.n, *(pass_hat_k(t.n, t.c, k) for k in usable)] for t in tasks]
    means = [sum(col) / len(tasks) for col in zip(*table, strict=True)] if tasks else []
    intervals: list[list[float] | None] = [None] * (1 + len(usable))
    if len(tasks) >= 2:
        intervals = [list(i) for i in bootstrap_means(table, seed=seed)]
    once, each = PASS_AT.at(k=1), PASS_HAT.generic
    return {
        once: means[0] if means else None,
        each: {str(k): means[1 + i] for i, k in enumerate(usable)},
        "n_tasks": len(tasks),
        "ci": {
            once: intervals[0],
            each: {str(k): intervals[1 + i] for i, k in enumerate(usable)},
        },
    }


def confusion_recovery(rows: Sequence[Mapping[str, Any]], seed: int) -> dict[str, Any]:
    """Recovery from confusion over the trials whose confusing message was said: the median
    over tasks of each task's mean turns to recover (over its recovered trials), its
    bootstrap interval over tasks, and the share recovered (mean over tasks). Null when no
    trial said a confusing message: not measured."""
    turns: dict[str, list[int]] = defaultdict(list)
    said: dict[str, int] = defaultdict(int)
    for row in rows:
        stats = (row.get("conditions") or {}).get("conversation") or {}
        if row["outcome"] == "infra_error" or stats.get("confusing_turn") is None:
            continue
        said[row["task_id"]] += 1
        if stats.get("recovery_turns") is not None:
            turns[row["task_id"]].append(stats["recovery_turns"])
    per_task_turns = [sum(v) / len(v) for _, v in sorted(turns.items())]
    recovered = [len(turns[t]) / n for t, n in sorted(said.items())]
    return {
        "recovery_turns": statistics.median(per_task_turns) if per_task_turns else None,
        "ci": median_interval(per_task_turns, seed),
        "recovered": sum(recovered) / len(recovered) if recovered else None,
        "confused_trials": sum(said.values()),
    }


def median_interval(values: Sequence[float], seed: int) -> list[float] | None:
    """A percentile bootstrap interval of the median of per-task values (null under two)."""
    if len(values) < 2:
        return None
    medians = [
        statistics.median(values[i] for i in draw)
        for draw in resample_indices(len(values), seed=seed)
    ]
    low, high = percentile_interval(medians, CONFIDENCE)
    return [low, high]


def personas_summary(
    by_variant: Mapping[str, Sequence[Mapping[str, Any]]],
    primary: str,
    ks: Sequence[int],
    outcomes: Outcomes,
    seed: int,
) -> dict[str, Any] | None:
    """Per persona run on the primary variant's conditions: pass rates with intervals, and
    recovery from confusion (null where not measured). None when no persona was run."""
    out: dict[str, Any] = {}
    for key, rows in by_variant.items():
        part = VariantKey.parse(key)
        name = part.persona
        if name is None or part.turns is not None or part.without("persona").key != primary:
            continue
        out[name] = {
            **pass_rates(outcomes(rows), ks, seed),
            "recovery": confusion_recovery(rows, seed),
        }
    return out or None


def rates_by_name(prefix: str, name: str, rates: PassRates) -> dict[str, float | None]:
    """A persona's or checkpoint's pass rates as the gate names them: PREFIX.NAME.pass@1 and
    PREFIX.NAME.pass^K."""
    out: dict[str, float | None] = {f"{prefix}.{name}.{PASS_AT.at(k=1)}": rates.pass_rate}
    out.update({f"{prefix}.{name}.{PASS_HAT.at(k=k)}": v for k, v in rates.pass_hat.items()})
    return out


@derives(
    "persona.{persona}.pass@1", "persona.{persona}.pass^{k}", "persona.{persona}.recovery_turns"
)
def persona_metrics(entry: ModelSummary) -> Measured:
    """Per persona: pass@1, pass^K and the turns to recover from confusion."""
    out: dict[str, float | None] = {}
    for name, row in (entry.personas or {}).items():
        out.update(rates_by_name("persona", name, row))
        out[f"persona.{name}.recovery_turns"] = row.recovery.recovery_turns
    return Measured(out)
